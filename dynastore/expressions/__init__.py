"""DynamoDB's five expression languages.

Usage, once per request::

    context = ExpressionContext(request.get("ExpressionAttributeNames"),
                                request.get("ExpressionAttributeValues"))
    condition = compile_condition(text, context)            # or FilterExpression
    plan = compile_update(update_text, context)
    projection = compile_projection(projection_text, context)
    key = compile_key_condition(key_text, context, "pk", "sk")
    context.check_all_used()                                 # after the last one

Every compile_* raises ValidationException with DynamoDB's message for any
problem DynamoDB finds before reading an item; what can only be known from
the item (UpdatePlan.apply's path/type/missing-attribute errors) is raised
when applying, before anything is written.

Caching (cache.py): the parse and the text-only checks are cached per text;
a whole compiled Condition / UpdatePlan / KeyCondition / Projection is
cached per (text, names, values), so a request repeated with the same
placeholders costs a dictionary lookup. Compiled objects are immutable and
shared; the placeholders they use are still marked on each request's context.

Useful extras for the operations: ``Condition.paths`` / ``top_level_names``
(key-attribute checks on filters), ``UpdatePlan.paths`` / ``read_paths`` /
``updated_attributes(item)`` (ReturnValues UPDATED_OLD / UPDATED_NEW),
``KeyCondition.sort_matches(value)``, ``project(item, paths)``.

Pipeline: lexer -> parser (recursive descent) -> ast (frozen) -> cache ->
validate (text checks, then placeholder checks via resolve) -> evaluate /
update / projection / key_condition.
"""

from dynastore.expressions.evaluate import Condition, compile_condition, get_path
from dynastore.expressions.key_condition import KeyCondition, compile_key_condition
from dynastore.expressions.projection import Projection, compile_projection, project
from dynastore.expressions.resolve import ExpressionContext
from dynastore.expressions.update import UpdatePlan, compile_update

__all__ = [
    "Condition",
    "ExpressionContext",
    "KeyCondition",
    "Projection",
    "UpdatePlan",
    "compile_condition",
    "compile_key_condition",
    "compile_projection",
    "compile_update",
    "get_path",
    "project",
]
