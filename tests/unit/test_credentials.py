"""The credentials file: its format, its defaults and every refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynastore.protocol.credentials import (
    DEFAULT_ACCOUNT_ID,
    AccessKey,
    CredentialsFileError,
    load_credentials,
    parse_credentials,
)

SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEXAMPLE//token="


def test_a_key_with_defaults() -> None:
    keys = parse_credentials(f"AKIDEXAMPLE:{SECRET}\n")
    assert keys == {"AKIDEXAMPLE": AccessKey("AKIDEXAMPLE", SECRET)}
    key = keys["AKIDEXAMPLE"]
    assert key.account_id == DEFAULT_ACCOUNT_ID == "000000000000"
    assert (key.readonly, key.admin, key.session_token) == (False, False, None)


def test_every_field_and_flag() -> None:
    text = (
        f"AKIDADMIN:{SECRET}:123456789012:admin\n"
        "AKIDREAD:read-secret:210987654321:readonly\n"
        f"ASIATEMP:temp-secret:123456789012:readonly, session-token={TOKEN}, admin\n"
    )
    keys = parse_credentials(text)
    assert keys["AKIDADMIN"] == AccessKey("AKIDADMIN", SECRET, "123456789012", admin=True)
    assert keys["AKIDREAD"] == AccessKey("AKIDREAD", "read-secret", "210987654321", readonly=True)
    assert keys["ASIATEMP"] == AccessKey(
        "ASIATEMP", "temp-secret", "123456789012", readonly=True, admin=True, session_token=TOKEN
    )


def test_an_empty_account_id_is_the_default() -> None:
    key = parse_credentials("AK:secret::readonly")["AK"]
    assert key.account_id == DEFAULT_ACCOUNT_ID
    assert key.readonly


def test_comments_blank_lines_and_whitespace() -> None:
    text = (
        "# dynastore credentials\n"
        "\n"
        "   \n"
        "  AK1 : secret-1   # trailing comment\n"
        "AK2:secret-2:123456789012:admin# no space before it\n"
        "\t# an indented comment\n"
    )
    keys = parse_credentials(text)
    assert keys == {
        "AK1": AccessKey("AK1", "secret-1"),
        "AK2": AccessKey("AK2", "secret-2", "123456789012", admin=True),
    }


def test_an_empty_file_has_no_keys() -> None:
    assert parse_credentials("") == {}
    assert parse_credentials("# nothing\n\n") == {}


def test_windows_line_endings() -> None:
    assert parse_credentials("AK:secret\r\nAK2:secret2\r\n").keys() == {"AK", "AK2"}


@pytest.mark.parametrize(
    "line, problem",
    [
        ("AKIDONLY", "missing secret access key for 'AKIDONLY'"),
        ("AKID:", "missing secret access key for 'AKID'"),
        (":" + SECRET, "missing access key id"),
        (f"AKID:{SECRET}:12345", "account id '12345' must be 12 digits"),
        (f"AKID:{SECRET}:12345678901x", "account id '12345678901x' must be 12 digits"),
        (f"AKID:{SECRET}:1234567890123", "account id '1234567890123' must be 12 digits"),
        (f"AKID:{SECRET}:12345678901\u0661", "must be 12 digits"),  # a non-ASCII digit
        (f"AKID:{SECRET}::superuser", "unknown flag 'superuser'"),
        (f"AKID:{SECRET}::readonly,write", "unknown flag 'write'"),
        (f"AKID:{SECRET}::session-token=", "empty session-token flag"),
        (f"AK ID:{SECRET}", "may not contain spaces or '/'"),
        (f"AK/ID:{SECRET}", "may not contain spaces or '/'"),
    ],
)
def test_a_bad_line_names_the_file_and_line(line: str, problem: str) -> None:
    text = f"# header\nGOOD:good-secret\n\n{line}\n"
    with pytest.raises(CredentialsFileError) as caught:
        parse_credentials(text, "/etc/dynastore/credentials")
    message = str(caught.value)
    assert message.startswith("/etc/dynastore/credentials, line 4: ")
    assert problem in message
    assert SECRET not in message
    assert isinstance(caught.value, ValueError)


def test_a_duplicate_key_id_names_the_second_line() -> None:
    with pytest.raises(
        CredentialsFileError, match=r"^<credentials>, line 3: duplicate access key id 'AK'$"
    ):
        parse_credentials("AK:first-secret\nOTHER:x\nAK:second-secret\n")


def test_an_unknown_flag_with_a_value_never_echoes_the_value() -> None:
    with pytest.raises(CredentialsFileError) as caught:
        parse_credentials(f"AK:{SECRET}::token={TOKEN}")
    assert TOKEN not in str(caught.value)
    assert "unknown flag 'token'" in str(caught.value)


def test_secrets_and_tokens_are_not_in_the_repr() -> None:
    key = parse_credentials(f"AK:{SECRET}:123456789012:session-token={TOKEN}")["AK"]
    for text in (repr(key), str(key), repr({"AK": key})):
        assert SECRET not in text
        assert TOKEN not in text
        assert "AK" in text


def test_access_keys_are_frozen() -> None:
    key = AccessKey("AK", "secret")
    with pytest.raises(AttributeError):
        key.admin = True  # type: ignore[misc]


def test_load_a_file(tmp_path: Path) -> None:
    path = tmp_path / "credentials"
    path.write_text(f"# keys\nAK:{SECRET}:123456789012:admin\n", encoding="utf-8")
    assert load_credentials(path) == {"AK": AccessKey("AK", SECRET, "123456789012", admin=True)}
    assert load_credentials(str(path)) == load_credentials(path)


def test_a_bad_file_names_its_path(tmp_path: Path) -> None:
    path = tmp_path / "credentials"
    path.write_text("AK:secret\nAK:secret\n", encoding="utf-8")
    with pytest.raises(CredentialsFileError, match=f"^{path}, line 2: duplicate"):
        load_credentials(path)


def test_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent"
    with pytest.raises(CredentialsFileError) as caught:
        load_credentials(path)
    assert str(caught.value) == f"cannot read credentials file {path}: No such file or directory"


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(CredentialsFileError, match="^cannot read credentials file "):
        load_credentials(tmp_path)


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "credentials"
    path.write_bytes(b"AK:\xff\xfe\n")
    with pytest.raises(CredentialsFileError, match="is not UTF-8 text"):
        load_credentials(path)
