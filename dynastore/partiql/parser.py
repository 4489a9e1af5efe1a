"""Recursive-descent parser: PartiQL text -> the typed tree of partiql/ast.py.

DynamoDB's dialect only: SELECT, INSERT ... VALUE, UPDATE ... SET/REMOVE,
DELETE FROM, and EXISTS(SELECT ...) for transactions. Syntax errors carry
the parser's detail after DynamoDB's "Statement wasn't well formed, can't
be processed: " (details pinned against the service: partiql/messages.py).

Precedence, loosest first: OR, AND, NOT, comparisons (= <> != < <= > >=
BETWEEN IN IS), + -, unary -.
"""

from __future__ import annotations

from collections.abc import Callable

from dynastore.errors import ValidationException
from dynastore.partiql import ast
from dynastore.partiql import messages as text
from dynastore.partiql.lexer import (
    END,
    NAME,
    NUMBER,
    PARAMETER,
    PUNCTUATION,
    QUOTED,
    STRING,
    Token,
    tokenize,
)
from dynastore.partiql.messages import not_well_formed

RESERVED = frozenset("""
absolute action add all allocate alter and any are as asc assertion at authorization avg
begin between bit bit_length by cascade cascaded case cast catalog char character
character_length char_length check close coalesce collate collation column commit connect
connection constraint constraints continue convert corresponding count create cross current
current_date current_time current_timestamp current_user cursor date deallocate dec decimal
declare default deferrable deferred delete desc describe descriptor diagnostics disconnect
distinct domain double drop else end escape except exception exec execute exists external
extract false fetch first float for foreign found from full get global go goto grant group
having identity immediate in indicator initially inner input insensitive insert int integer
intersect interval into is isolation join key language last left level like local lower
match max min minute module month names national natural nchar next no not null nullif
numeric octet_length of on only open option or order outer output overlaps pad partial
position precision prepare preserve primary prior privileges procedure public read real
references relative restrict revoke right rollback rows schema scroll second section select
session session_user set size smallint some space sql sqlcode sqlerror sqlstate substring sum
system_user table temporary then time timestamp to transaction translate translation trim
true union unique unknown update upper usage user using value values varchar varying view
when whenever where with work write year zone missing pivot unpivot limit tuple remove index
conflict do nothing returning modified new old let bool boolean string symbol clob blob
struct list sexp bag
""".split())
"""PartiQL's keywords (SQL-92's reserved words and PartiQL's own): a bare
name may not be one (``WHERE pad = 1`` fails; ``WHERE "pad" = 1`` runs)."""

FUNCTIONS = frozenset((
    "begins_with", "contains", "attribute_type", "size", "attribute_exists",
    "attribute_not_exists", "list_append", "set_add", "set_delete", "if_not_exists", "exists",
))
"""Names that may be called, reserved or not (``size(a)``, ``exists(...)``)."""

IS_TYPES = {
    "MISSING": "MISSING", "NULL": "NULL", "BOOLEAN": "BOOL", "BOOL": "BOOL", "STRING": "S",
    "NUMERIC": "N", "NUMBER": "N", "BLOB": "B", "STRUCT": "M", "TUPLE": "M", "LIST": "L",
    "INT": "", "INTEGER": "", "INT4": "", "INT8": "", "FLOAT": "", "DECIMAL": "", "DOUBLE": "",
    "SMALLINT": "", "REAL": "", "CHAR": "", "VARCHAR": "", "CHARACTER": "", "BAG": "",
    "SEXP": "", "SYMBOL": "", "CLOB": "", "DATE": "", "TIME": "", "TIMESTAMP": "",
}
"""Type names ``IS`` accepts; those with no DynamoDB type ("") parse and are refused later."""

OPERATOR_KEYWORDS = ("is", "like", "between", "in", "and", "or")
COMPARISONS = ("=", "<>", "!=", "<", "<=", ">", ">=")
RETURNING = {
    ("all", "old"): "ALL_OLD", ("all", "new"): "ALL_NEW",
    ("modified", "old"): "UPDATED_OLD", ("modified", "new"): "UPDATED_NEW",
}


def parse(statement: str) -> ast.Statement:
    """The tree of one statement; ValidationException for anything DynamoDB refuses to parse."""
    return _Parser(tokenize(statement), statement).statement()


class _Parser:
    def __init__(self, tokens: list[Token], statement: str) -> None:
        self.tokens = tokens
        self.text = statement
        self.at = 0
        self.parameters = 0

    def where_is(self, token: Token, length: int) -> str:
        """``line:column:length`` of a token (1-based, in characters)."""
        line = self.text.count("\n", 0, token.position) + 1
        column = token.position - (self.text.rfind("\n", 0, token.position) + 1) + 1
        return f"{line}:{column}:{length}"

    # --- tokens ---------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.at + ahead, len(self.tokens) - 1)]

    def take(self) -> Token:
        token = self.tokens[self.at]
        if token.kind != END:
            self.at += 1
        return token

    def accept_keyword(self, *words: str) -> Token | None:
        if self.peek().is_keyword(*words):
            return self.take()
        return None

    def expect_keyword(self, word: str) -> None:
        if self.accept_keyword(word) is None:
            raise self.unexpected()

    def accept(self, mark: str) -> bool:
        token = self.peek()
        if token.kind == PUNCTUATION and token.text == mark:
            self.at += 1
            return True
        return False

    def expect(self, mark: str) -> None:
        if not self.accept(mark):
            raise self.unexpected()

    def at_end(self) -> bool:
        token = self.peek()
        return token.kind == END or (token.kind == PUNCTUATION and token.text == ";")

    def unexpected(self) -> ValidationException:
        """The parser's complaint about the token it stands on."""
        token = self.peek()
        if self.at_end():
            return not_well_formed(text.UNEXPECTED_TERM)
        if token.is_keyword(*OPERATOR_KEYWORDS):
            return not_well_formed(text.UNEXPECTED_OPERATOR)
        if token.kind == NAME and token.text.lower() in RESERVED:
            return not_well_formed(text.UNEXPECTED_KEYWORD)
        if token.kind == PUNCTUATION and token.text in (*COMPARISONS, "+", "/", "%", "||"):
            return not_well_formed(text.UNEXPECTED_OPERATOR)
        return not_well_formed(text.LEFTOVER)

    # --- statements -----------------------------------------------------------------

    def statement(self) -> ast.Statement:
        first = self.peek()
        parsed: ast.Statement
        if first.is_keyword("select"):
            parsed = self.select()
        elif first.is_keyword("insert"):
            parsed = self.insert()
        elif first.is_keyword("update"):
            parsed = self.update()
        elif first.is_keyword("delete"):
            parsed = self.delete()
        elif first.is_keyword("exists"):
            parsed = self.exists()
        elif first.is_keyword("from"):
            parsed = self.update_from_first()
        elif self.at_end():
            raise not_well_formed(text.UNEXPECTED_TERM)
        else:
            raise not_well_formed(text.EXPECTED_DATA_MANIPULATION)
        self.accept(";")
        if self.peek().kind != END:
            raise not_well_formed(text.LEFTOVER)
        return parsed

    def select(self) -> ast.Select:
        self.expect_keyword("select")
        projection = self.projection()
        self.expect_keyword("from")
        if self.at_end():  # SELECT's FROM takes any expression: nothing there is no term
            raise not_well_formed(text.UNEXPECTED_TERM)
        source = self.source()
        self.refuse_alias()
        where = self.where()
        order_by: list[tuple[str, bool]] = []
        if self.accept_keyword("order"):
            self.expect_keyword("by")
            while True:
                name = self.name_token()
                descending = False
                if self.accept_keyword("desc"):
                    descending = True
                else:
                    self.accept_keyword("asc")
                order_by.append((name, descending))
                if not self.accept(","):
                    break
        return ast.Select(projection, source, where, tuple(order_by), self.parameters)

    def projection(self) -> tuple[ast.Path, ...] | None:
        if self.at_end() or self.peek().is_keyword("from"):
            raise self.unexpected()
        star = False
        paths: list[ast.Path] = []
        while True:
            if self.accept("*"):
                star = True
            else:
                node = self.additive()
                if isinstance(node, ast.Call):
                    raise ValidationException(f"{text.UNEXPECTED_PATH_COMPONENT} at {node.at}")
                if not isinstance(node, ast.Path):
                    raise ValidationException(text.UNSUPPORTED_OPERATION.format(type(node).__name__))
                paths.append(node)
            if not self.accept(","):
                break
        if star and paths:
            raise ValidationException(text.STAR_AND_OTHERS)
        return None if star else tuple(paths)

    def source(self) -> ast.Source:
        if self.at_end() or self.peek().kind not in (NAME, QUOTED):
            raise not_well_formed(text.EXPECTED_SIMPLE_PATH)
        names = [self.source_name()]
        while self.accept("."):
            names.append(self.source_name())
        if len(names) > 2:
            raise ValidationException(text.FROM_TOO_MANY_COMPONENTS)
        return ast.Source(names[0], names[1] if len(names) == 2 else None)

    def source_name(self) -> str:
        token = self.take()
        if token.kind == QUOTED:
            if token.text == "":
                raise ValidationException(text.PATH_COMPONENT_EMPTY)
            return token.text
        if token.kind == NAME and token.text.lower() not in RESERVED:
            return token.text
        self.at -= 1
        raise not_well_formed(text.EXPECTED_SIMPLE_PATH)

    def refuse_alias(self) -> None:
        token = self.peek()
        if token.is_keyword("as") or token.kind == QUOTED or (
            token.kind == NAME and token.text.lower() not in RESERVED
        ):
            raise ValidationException(text.ALIASING)

    def where(self) -> ast.Node | None:
        if self.accept_keyword("where") is None:
            return None
        return self.expression()

    def returning(self) -> str | None:
        if self.accept_keyword("returning") is None:
            return None
        first = self.accept_keyword("all", "modified")
        second = self.accept_keyword("old", "new")
        if first is None or second is None:
            raise self.unexpected()
        if not self.accept("*"):
            if self.peek().kind in (NAME, QUOTED):
                raise ValidationException(
                    "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"
                )
            raise self.unexpected()
        if self.accept(","):
            raise ValidationException("Invalid syntax with multiple returning elements in RETURNING clause")
        return RETURNING[(first.text.lower(), second.text.lower())]

    def insert(self) -> ast.Insert:
        self.expect_keyword("insert")
        self.expect_keyword("into")
        source = self.source()
        if self.accept_keyword("value") is None:
            if self.peek().is_keyword("values") or self.peek().kind == PUNCTUATION and self.peek().text == "(":
                raise ValidationException(text.INSERT_MANY)
            raise self.unexpected() if self.at_end() else not_well_formed(text.LEFTOVER)
        item = self.expression()
        if isinstance(item, ast.BagLiteral) or (
            isinstance(item, ast.Value) and ("SS" in item.value or "NS" in item.value)
        ):
            raise ValidationException(text.INSERT_MANY)
        if not isinstance(item, ast.TupleLiteral) and not (isinstance(item, ast.Value) and "M" in item.value):
            raise ValidationException(text.INSERT_NOT_A_TUPLE)
        if self.peek().is_keyword("returning"):
            raise ValidationException(text.RETURNING_IN_INSERT)
        return ast.Insert(source, item, self.parameters)

    def update(self) -> ast.Update:
        self.expect_keyword("update")
        source = self.source()
        self.refuse_alias()
        sets, removes = self.assignments()
        where = self.where()
        returning = self.returning()
        return ast.Update(source, tuple(sets), tuple(removes), where, returning, self.parameters)

    def update_from_first(self) -> ast.Update:
        """PartiQL's other spelling of UPDATE: ``FROM t [WHERE ...] SET ...``."""
        self.expect_keyword("from")
        source = self.source()
        self.refuse_alias()
        where = self.where()
        sets, removes = self.assignments()
        returning = self.returning()
        return ast.Update(source, tuple(sets), tuple(removes), where, returning, self.parameters)

    def assignments(self) -> tuple[list[tuple[ast.Path, ast.Node]], list[ast.Path]]:
        sets: list[tuple[ast.Path, ast.Node]] = []
        removes: list[ast.Path] = []
        while True:
            if self.accept_keyword("set"):
                while True:
                    target = self.path()
                    self.expect("=")
                    sets.append((target, self.rhs(self.additive)))
                    if not self.accept(","):
                        break
            elif self.accept_keyword("remove"):
                while True:
                    removes.append(self.path())
                    if not self.accept(","):
                        break
            else:
                break
        if not sets and not removes:
            raise self.unexpected()
        return sets, removes

    def delete(self) -> ast.Delete:
        self.expect_keyword("delete")
        if self.accept_keyword("from") is None:
            raise not_well_formed(text.EXPECTED_SIMPLE_PATH)
        source = self.source()
        self.refuse_alias()
        where = self.where()
        returning = self.returning()
        return ast.Delete(source, where, returning, self.parameters)

    def exists(self) -> ast.Exists:
        self.expect_keyword("exists")
        self.expect("(")
        select = self.select()
        self.expect(")")
        return ast.Exists(select, self.parameters)

    # --- expressions ----------------------------------------------------------------

    def rhs(self, parse: Callable[[], ast.Node]) -> ast.Node:
        """The right-hand side of an infix operator (nothing there is its own error)."""
        if self.at_end():
            raise not_well_formed(text.MISSING_RIGHT_HAND_SIDE)
        return parse()

    def expression(self) -> ast.Node:
        node = self.conjunction()
        while self.accept_keyword("or"):
            node = ast.Or(node, self.rhs(self.conjunction))
        return node

    def conjunction(self) -> ast.Node:
        node = self.negation()
        while self.accept_keyword("and"):
            node = ast.And(node, self.rhs(self.negation))
        return node

    def negation(self) -> ast.Node:
        if self.accept_keyword("not"):
            return ast.Not(self.negation())
        return self.comparison()

    def comparison(self) -> ast.Node:
        left = self.additive()
        token = self.peek()
        if token.kind == PUNCTUATION and token.text in COMPARISONS:
            self.take()
            operator = "<>" if token.text == "!=" else token.text
            return ast.Comparison(operator, left, self.rhs(self.additive))
        negated = False
        if token.is_keyword("not") and self.peek(1).is_keyword("between", "in", "like"):
            self.take()
            negated = True
        if self.accept_keyword("between"):
            low = self.rhs(self.additive)
            self.expect_keyword("and")
            node: ast.Node = ast.Between(left, low, self.rhs(self.additive))
            return ast.Not(node) if negated else node
        if self.accept_keyword("in"):
            node = ast.In(left, self.in_options())
            return ast.Not(node) if negated else node
        if self.accept_keyword("is"):
            is_negated = self.accept_keyword("not") is not None
            name = self.peek()
            if name.kind != NAME:
                raise not_well_formed(text.EXPECTED_TYPE_NAME)
            type_name = name.text.upper()
            if type_name not in IS_TYPES:
                raise not_well_formed(text.EXPECTED_TYPE_NAME)
            self.take()
            if type_name == "DOUBLE":
                self.accept_keyword("precision")
            return ast.Is(left, type_name, is_negated)
        if self.peek().is_keyword("like"):
            raise ValidationException(text.UNSUPPORTED_OPERATION.format("Like"))
        return left

    def in_options(self) -> tuple[ast.Node, ...]:
        closing = "]" if self.accept("[") else ")" if self.accept("(") else None
        if closing is None:
            raise self.unexpected()
        options = [self.additive()]
        while self.accept(","):
            options.append(self.additive())
        self.expect(closing)
        return tuple(options)

    def additive(self) -> ast.Node:
        node = self.unary()
        while True:
            token = self.peek()
            if token.kind == PUNCTUATION and token.text in ("+", "-"):
                self.take()
                node = ast.Arithmetic(token.text, node, self.rhs(self.unary))
            else:
                return node

    def unary(self) -> ast.Node:
        if self.accept("-"):
            token = self.peek()
            if token.kind == NUMBER:
                self.take()
                return ast.Value({"N": "-" + _decimal(token.text)})
            return ast.Arithmetic("-", ast.Value({"N": "0"}), self.unary())
        return self.term()

    def term(self) -> ast.Node:
        token = self.peek()
        if token.kind == STRING:
            self.take()
            return ast.Value({"S": token.text})
        if token.kind == NUMBER:
            self.take()
            return ast.Value({"N": _decimal(token.text)})
        if token.kind == PARAMETER:
            self.take()
            self.parameters += 1
            return ast.Parameter(self.parameters - 1)
        if token.kind == PUNCTUATION:
            if token.text == "(":
                self.take()
                node = self.expression()
                self.expect(")")
                return node
            if token.text == "[":
                self.take()
                return ast.ListLiteral(self.items("]"))
            if token.text == "<<":
                self.take()
                return ast.BagLiteral(self.items(">>"))
            if token.text == "{":
                self.take()
                return self.tuple_literal()
            raise self.unexpected()
        if token.kind == NAME:
            lowered = token.text.lower()
            following = self.peek(1)
            if following.kind == PUNCTUATION and following.text == "(" and (
                lowered in FUNCTIONS or lowered not in RESERVED
            ):
                self.take()
                self.take()
                first = self.peek()
                arguments: list[ast.Node] = []
                if not self.accept(")"):
                    arguments.append(self.expression())
                    while self.accept(","):
                        arguments.append(self.expression())
                    self.expect(")")
                first_length = len(first.text) + (2 if first.kind in (QUOTED, STRING) else 0)
                return ast.Call(lowered, tuple(arguments), self.where_is(token, len(token.text)),
                                self.where_is(first, first_length))
            if lowered in ("true", "false"):
                self.take()
                return ast.Value({"BOOL": lowered == "true"})
            if lowered == "null":
                self.take()
                return ast.Value({"NULL": True})
            if lowered == "missing":
                self.take()
                return ast.Missing()
        if token.kind in (NAME, QUOTED):
            return self.path()
        raise self.unexpected()

    def items(self, closing: str) -> tuple[ast.Node, ...]:
        found: list[ast.Node] = []
        if self.accept(closing):
            return ()
        while True:
            found.append(self.expression())
            if not self.accept(","):
                break
        self.expect(closing)
        return tuple(found)

    def tuple_literal(self) -> ast.TupleLiteral:
        entries: list[tuple[str, ast.Node]] = []
        if self.accept("}"):
            return ast.TupleLiteral(())
        while True:
            key = self.additive()
            self.expect(":")
            entries.append((self.tuple_key(key), self.expression()))
            if not self.accept(","):
                break
        self.expect("}")
        return ast.TupleLiteral(tuple(entries))

    def tuple_key(self, key: ast.Node) -> str:
        if isinstance(key, ast.Value) and "S" in key.value:
            return str(key.value["S"])
        if isinstance(key, ast.Path) and len(key.steps) == 1:
            return key.root
        kind = {"N": "DECIMAL", "BOOL": "BOOL", "NULL": "NULL"}
        actual = next((kind[k] for k in key.value if k in kind), "STRUCT") if isinstance(key, ast.Value) else "STRUCT"
        raise ValidationException(text.TUPLE_KEY_TYPE.format(actual, "root"))

    def path(self) -> ast.Path:
        steps: list[str | int] = [self.name_token()]
        while True:
            if self.accept("."):
                if self.peek().kind == NAME and self.peek().text.lower() in RESERVED:
                    raise not_well_formed(text.INVALID_PATH_DOT)
                steps.append(self.name_token())
            elif self.peek().kind == PUNCTUATION and self.peek().text == "[":
                self.take()
                token = self.take()
                if token.kind == NUMBER and token.text.isdigit():
                    steps.append(int(token.text))
                elif token.kind == STRING:
                    steps.append(token.text)  # a['b'] is a.b
                else:
                    self.at -= 1
                    raise self.unexpected()
                self.expect("]")
            else:
                return ast.Path(tuple(steps))

    def name_token(self) -> str:
        token = self.peek()
        if token.kind == QUOTED:
            self.take()
            if token.text == "":
                raise ValidationException(text.PATH_COMPONENT_EMPTY)
            return token.text
        if token.kind == NAME and token.text.lower() not in RESERVED:
            self.take()
            return token.text
        raise self.unexpected()


_JAVA_INT_MAX = 2**31 - 1


def _decimal(literal: str) -> str:
    """A number literal as written, when a Java BigDecimal can hold it (the
    service's parser): an exponent, or a scale (digits after the point less
    the exponent), outside a 32-bit int is a statement that "wasn't well
    formed", with nothing after the colon (pinned on the service)."""
    mantissa, _, exponent_text = literal.lower().partition("e")
    if not exponent_text:
        return literal
    exponent = int(exponent_text)
    scale = len(mantissa.partition(".")[2]) - exponent
    if not -_JAVA_INT_MAX - 1 <= exponent <= _JAVA_INT_MAX or not -_JAVA_INT_MAX - 1 <= scale <= _JAVA_INT_MAX:
        raise not_well_formed("")
    return literal

