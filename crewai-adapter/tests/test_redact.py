import logging

from kubecrew_crewai.redact import RedactingFilter, Redactor


def test_replaces_every_secret_longest_first_in_nested_values() -> None:
    redactor = Redactor(["sk-abcdef", "sk-abcdef-longer", "short"])
    assert redactor.value({"a": ["key sk-abcdef-longer and sk-abcdef"], "n": 3}) == {
        "a": ["key [redacted] and [redacted]"],
        "n": 3,
    }
    # Values under six characters would match ordinary words: they are not searched for.
    assert redactor.text("a short text") == "a short text"


def test_log_records_pass_redacted() -> None:
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "calling with %s", ("sk-abcdef",), None)
    assert RedactingFilter(Redactor(["sk-abcdef"])).filter(record)
    assert record.getMessage() == "calling with [redacted]"
