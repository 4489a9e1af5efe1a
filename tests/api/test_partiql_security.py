"""PartiQL with a ``readonly`` access key: SELECTs run, writes are refused."""

from __future__ import annotations

from tests.api.test_security import client_for, error_of, new_table, secured

__all__ = ["secured"]


def test_a_readonly_key_selects_but_cannot_write(secured: str) -> None:
    name = new_table(client_for(secured))
    writer = client_for(secured)
    writer.execute_statement(Statement=f"INSERT INTO \"{name}\" VALUE {{'pk': 'a'}}")
    reader = client_for(secured, who="reader")
    select = f"SELECT * FROM \"{name}\" WHERE pk = 'a'"
    assert reader.execute_statement(Statement=select)["Items"] == [{"pk": {"S": "a"}}]
    assert reader.batch_execute_statement(Statements=[{"Statement": select}])["Responses"][0]["Item"] == {
        "pk": {"S": "a"}}
    assert reader.execute_transaction(TransactStatements=[{"Statement": select}])["Responses"] == [
        {"Item": {"pk": {"S": "a"}}}]
    for write in (
        lambda: reader.execute_statement(Statement=f"DELETE FROM \"{name}\" WHERE pk = 'a'"),
        lambda: reader.batch_execute_statement(Statements=[
            {"Statement": select}, {"Statement": f"INSERT INTO \"{name}\" VALUE {{'pk': 'b'}}"}]),
        lambda: reader.execute_transaction(TransactStatements=[
            {"Statement": f"UPDATE \"{name}\" SET v = 1 WHERE pk = 'a'"}]),
    ):
        assert error_of(write)["Code"] == "AccessDeniedException"
    assert writer.scan(TableName=name)["Items"] == [{"pk": {"S": "a"}}]
    assert error_of(lambda: reader.execute_statement(Statement="SELECT * FROM"))["Code"] == "ValidationException"
