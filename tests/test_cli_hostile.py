"""Issue 15 §5: the command line never shows a traceback for a user error; exit codes 0/1/2/3."""

from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
import pytest

import polfair.api
from polfair.cli import check_output_path, flag_message, main


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "d.parquet"
    pl.DataFrame({"y": [1, 0, 1, 0, None, 1], "p": [1, 0, 0, 0, 1, 1], "g": ["a", "a", "b", "b", "a", "b"]}).write_parquet(path)
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


class TestExitCodes:
    def test_success(self, capsys, data) -> None:
        rc, _, err = run(capsys, "report", data, "--y-true", "y", "--y-pred", "p", "--protected", "g", "--on-missing", "ignore")
        assert rc == 0 and err == ""

    @pytest.mark.parametrize(
        ("extra", "needle"),
        [
            (["--favorable", "yes"], "--favorable yes"),  # a value the label dtype cannot hold
            (["--protected", "nope"], "nope"),  # a missing column
            (["--protected", "g +"], "SQL expression"),  # a bad expression
            (["--weight", "g"], "weight"),  # a string weight
            (["--out", "report.txt"], "--out"),  # an unknown extension
        ],
    )
    def test_user_errors_exit_2_in_one_line(self, capsys, data, extra, needle) -> None:
        argv = ["report", data, "--y-true", "y", "--y-pred", "p", "--protected", "g", *extra]
        rc, _, err = run(capsys, *argv)
        assert rc == 2
        lines = [line for line in err.splitlines() if line.startswith("polfair: error:")]
        assert len(lines) == 1 and needle in lines[0], err
        assert "Traceback" not in err

    def test_messages_speak_in_flags(self, capsys, data) -> None:
        rc, _, err = run(capsys, "report", data, "--y-true", "y", "--protected", "g", "--favorable", "1.5")
        assert rc == 2 and "--favorable 1.5" in err and "favorable=" not in err

    def test_missing_file_and_empty_glob(self, capsys, tmp_path) -> None:
        for path in (str(tmp_path / "none.parquet"), str(tmp_path / "none-*.parquet"), str(tmp_path / "none.csv")):
            rc, _, err = run(capsys, "report", path, "--y-true", "y", "--protected", "g")
            assert rc == 2 and "Traceback" not in err and "none" in err

    def test_malformed_csv(self, capsys, tmp_path) -> None:
        path = tmp_path / "bad.csv"
        path.write_text("y,g\n" + "".join(f"{i % 2},a\n" for i in range(200)) + "x,b\n")
        rc, _, err = run(capsys, "report", str(path), "--y-true", "y", "--protected", "g")
        assert rc == 2 and "bad.csv" in err and "'y'" in err and "Traceback" not in err

    def test_usage_error_is_2(self, capsys, data) -> None:
        with pytest.raises(SystemExit) as exc:
            main(["report", data, "--threshold", "x"])
        assert exc.value.code == 2

    def test_violation_is_1(self, capsys, data, tmp_path) -> None:
        cfg = tmp_path / "c.json"
        cfg.write_text('{"thresholds": {"selection_rate": [0.9, 1.0]}}')
        rc, _, _ = run(capsys, "report", data, "--y-true", "y", "--y-pred", "p", "--protected", "g", "--config", str(cfg),
                       "--fail-on-violation", "--on-missing", "ignore", "--min-sample-size", "0")  # fmt: skip
        assert rc == 1  # (a small table: the small-group policy off, else its groups are insufficient_data)

    def test_internal_error_is_3_with_traceback(self, capsys, data, monkeypatch) -> None:
        def boom(*a, **k):
            raise KeyError("bug")

        for name in ("fairness_report", "fairness_report_batches"):  # the CLI loads the engine at the pass
            monkeypatch.setattr(polfair.api, name, boom)
        rc, _, err = run(capsys, "report", data, "--y-true", "y", "--protected", "g")
        assert rc == 3 and "Traceback" in err and "internal error" in err

    def test_help_documents_exit_codes(self, capsys) -> None:
        with pytest.raises(SystemExit) as exc:
            main(["--help"])
        assert exc.value.code == 0
        out = capsys.readouterr().out
        assert all(f"  {c}  " in out for c in "0123")


class TestOutputChecksBeforeThePass:
    def test_out_is_a_directory(self, capsys, data, tmp_path) -> None:
        rc, _, err = run(capsys, "report", data, "--y-true", "y", "--protected", "g", "--out", str(tmp_path))
        assert rc == 2 and "is a directory" in err

    @pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes anywhere")
    def test_unwritable_out_fails_before_the_pass(self, capsys, data, tmp_path, monkeypatch) -> None:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        called = []
        for name in ("fairness_report", "fairness_report_batches"):  # the CLI loads the engine at the pass
            monkeypatch.setattr(polfair.api, name, lambda *a, **k: called.append(1))
        rc, _, err = run(capsys, "report", data, "--y-true", "y", "--protected", "g", "--out", str(ro / "r.parquet"))
        assert rc == 2 and "not writable" in err and not called

    def test_missing_parent_fails_before_the_pass(self, capsys, data, tmp_path, monkeypatch) -> None:
        called = []
        for name in ("fairness_report", "fairness_report_batches"):  # the CLI loads the engine at the pass
            monkeypatch.setattr(polfair.api, name, lambda *a, **k: called.append(1))
        rc, _, err = run(capsys, "report", data, "--y-true", "y", "--protected", "g", "--out", str(tmp_path / "no" / "r.csv"))
        assert rc == 2 and "does not exist" in err and not called

    def test_check_output_path_accepts_a_new_file(self, tmp_path) -> None:
        check_output_path(str(tmp_path / "r.parquet"), "--out")


def test_a_reader_that_leaves_early_ends_the_command_quietly() -> None:
    # `polfair demo | head -1`: the reader has gone; every write fails (deterministic: the pipe's read
    # end is closed before the command starts). No traceback, no "error" line, exit 141 as for SIGPIPE.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        res = subprocess.run([sys.executable, "-m", "polfair", "demo"], stdout=write_end, stderr=subprocess.PIPE,
                             text=True, timeout=120, check=False)  # fmt: skip
    finally:
        os.close(write_end)
    assert res.returncode == 141, res.stderr
    assert "Traceback" not in res.stderr and "error" not in res.stderr


class TestWarnings:
    """Run as a process: pytest would capture the warnings that the command prints."""

    @staticmethod
    def cli(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "polfair", *argv], capture_output=True, text=True, check=False)

    def test_one_clean_line(self, data) -> None:
        res = self.cli("report", data, "--y-true", "y", "--y-pred", "p", "--protected", "g")
        assert res.returncode == 0, res.stderr
        warns = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(warns) == 1 and warns[0].startswith("polfair: warning: ") and ".py:" not in res.stderr
        assert "--on-missing ignore" in warns[0]

    def test_labels_only_does_not_mention_predictions(self, data) -> None:
        res = self.cli("report", data, "--y-true", "y", "--protected", "g")
        assert res.returncode == 0 and "null label" in res.stderr and "prediction" not in res.stderr


def test_flag_message_translates_keywords_only() -> None:
    assert flag_message("y_true='y': bad; pass on_missing='ignore'") == "--y-true y: bad; pass --on-missing ignore"
    assert flag_message("pl.col('x').alias('y_true')") == "pl.col('x').alias('y_true')"
