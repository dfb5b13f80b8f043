"""A judge named by a file (``--judge FILE.toml``) is the judge its spec names: same spec, same label, same calls."""

from __future__ import annotations

import pytest

from rqbench.evaluate.judge.config_file import judge_spec
from rqbench.llm.config import hosted_config


def write(tmp_path, text: str, name: str = "judge.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_judge_file_is_the_spec_with_its_settings_in_name_order(tmp_path):
    path = write(
        tmp_path,
        'model = "deepseek/deepseek-chat"\n[settings]\ntemperature = 0\nmax_tokens = 4096\nreasoning_effort = "high"\n',
    )
    spec = judge_spec(path)
    assert spec == "deepseek/deepseek-chat@max_tokens=4096,reasoning_effort=high,temperature=0"
    cfg = hosted_config(spec)  # the file's judge is resolved as the spec is
    assert (cfg.temperature, cfg.max_tokens, cfg.reasoning_effort) == (0.0, 4096, "high")
    assert judge_spec(write(tmp_path, 'model = "local"\n', "plain.toml")) == "local"
    assert judge_spec("local@temperature=0.7") == "local@temperature=0.7"  # a spec passes as it is


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('model = "m"\n[settings]\ntemperature = "0,5"\n', "settings.temperature"),
        ('model = "m"\nlabel = "x"\n', "label"),
        ('model = "m"\n[settings]\nwho = "me"\n', "settings.who: not a judge setting"),
        ("[settings]\ntemperature = 0\n", "model"),
        ('model = "m@temperature=0"\n', "[settings]"),
        ("model = \n", "not TOML"),
    ],
)
def test_a_bad_judge_file_is_refused_naming_the_file_and_the_field(tmp_path, text, named):
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as err:
        judge_spec(path)
    assert str(path) in str(err.value) and named in str(err.value)


def test_the_command_line_refuses_a_bad_judge_file_before_any_work(tmp_path, capsys):
    from rqbench.cli import main

    path = write(tmp_path, 'model = "m"\n[settings]\nwho = "me"\nspeed = [1]\n')
    with pytest.raises(SystemExit) as stop:
        main(["judge", str(tmp_path / "sub"), "--judge", path, "--dry-run"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--judge" in err and path in err and "settings.speed" in err
    missing = str(tmp_path / "nowhere.toml")
    with pytest.raises(SystemExit):
        main(["judge", str(tmp_path / "sub"), "--judge", missing, "--dry-run"])
    assert "cannot be read" in capsys.readouterr().err
