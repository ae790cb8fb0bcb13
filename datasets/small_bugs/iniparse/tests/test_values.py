from iniparse import as_bool, parse_ini


def test_yes_is_true():
    assert as_bool("Yes") is True


def test_sections_and_hash_comments():
    text = "# top\n[db]\nhost = local\n"
    assert parse_ini(text) == {"": {}, "db": {"host": "local"}}
