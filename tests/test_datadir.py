"""Where the shared data sets are found: $ATTNKIT_DATA_DIR, else ../shared/data from the working
directory, else beside the checkout attnkit was installed from (a lesson's or a notebook's
working directory is elsewhere)."""

from pathlib import Path

import attnkit.datadir as datadir


def test_the_data_dir_falls_back_to_the_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNKIT_DATA_DIR", raising=False)
    checkout = tmp_path / "checkout" / "main"
    checkout.mkdir(parents=True)
    (checkout.parent / "shared" / "data").mkdir(parents=True)
    monkeypatch.setattr(datadir, "CHECKOUT", checkout)
    elsewhere = tmp_path / "notebooks" / "work"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    assert datadir.default_data_dir().resolve() == (checkout.parent / "shared" / "data")
    (tmp_path / "notebooks" / "shared" / "data").mkdir(parents=True)  # the working dir's wins
    assert datadir.default_data_dir() == Path("..") / "shared" / "data"
    monkeypatch.setenv("ATTNKIT_DATA_DIR", str(tmp_path / "mine"))  # the variable wins over all
    assert datadir.default_data_dir() == tmp_path / "mine"


def test_with_no_data_anywhere_the_relative_path_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNKIT_DATA_DIR", raising=False)
    monkeypatch.setattr(datadir, "CHECKOUT", tmp_path / "nowhere" / "main")
    monkeypatch.chdir(tmp_path)
    assert datadir.default_data_dir() == Path("..") / "shared" / "data"
