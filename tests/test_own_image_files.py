"""Issue 35 item 5, the core's part: a user's own test images (a folder, or a list of paths
relative to the list) paired with one reference a line; every fault names the file and line
(attnkit.textfiles.list_files, reference_lines, paired_files, read_listed)."""

from __future__ import annotations

import pytest

from attnkit.errors import DataError
from attnkit.textfiles import Listed, list_files, paired_files, read_listed, reference_lines


def _touch(folder, *names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"x")
    return folder


def test_a_folder_is_its_images_sorted_by_name_with_numbers_in_order(tmp_path):
    folder = _touch(tmp_path / "imgs", "10.png", "2.jpg", "1.JPEG", "notes.txt", "b.png")
    (folder / "sub.png").mkdir()
    found = list_files(folder)
    assert [f.path.name for f in found] == ["1.JPEG", "2.jpg", "10.png", "b.png"]
    assert all(f.where is None for f in found)
    assert [f.path.name for f in list_files(folder, (".png",))] == ["10.png", "b.png"]


def test_a_list_names_paths_relative_to_its_folder_and_each_line(tmp_path):
    _touch(tmp_path / "data" / "imgs", "a.png", "b.png")
    listing = tmp_path / "data" / "test.txt"
    listing.write_text(f"imgs/b.png\r\n  imgs/a.png \n{tmp_path / 'data/imgs/a.png'}\n")
    found = list_files(listing)
    assert found == [
        Listed(tmp_path / "data" / "imgs" / "b.png", f"{listing}, line 1"),
        Listed(tmp_path / "data" / "imgs" / "a.png", f"{listing}, line 2"),
        Listed(tmp_path / "data" / "imgs" / "a.png", f"{listing}, line 3"),
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("imgs/a.png\nimgs/gone.png\n", "test.txt, line 2: {d}/imgs/gone.png: no such image file"),
        ("imgs/a.png\n\nimgs/a.png\n", "test.txt, line 2: an empty line, expected the path"),
        ("imgs\n", "test.txt, line 1: {d}/imgs: is a directory"),
        (b"imgs/a.png\n\xff.png\n", "test.txt, line 2: invalid UTF-8"),
    ],
)
def test_list_faults_name_the_file_and_line(tmp_path, text, message):
    _touch(tmp_path / "imgs", "a.png")
    listing = tmp_path / "test.txt"
    listing.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(DataError, match="^" + str(tmp_path) + "/") as caught:
        list_files(listing)
    assert message.format(d=tmp_path) in str(caught.value)


def test_a_missing_source_an_empty_folder_and_one_image_are_named(tmp_path):
    with pytest.raises(DataError, match=r"gone: not found \(a folder of images, or a file"):
        list_files(tmp_path / "gone")
    _touch(tmp_path / "empty", "notes.txt")
    with pytest.raises(DataError, match=r"empty: no image files \(\*.png, \*.jpg, \*.jpeg\)"):
        list_files(tmp_path / "empty")
    _touch(tmp_path, "one.png")
    with pytest.raises(DataError, match="one.png: one image; give a folder of images or a file"):
        list_files(tmp_path / "one.png")


def test_references_are_a_line_each_and_a_blank_one_is_named(tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_bytes(b"\xef\xbb\xbfcat \r\ndog\n")
    assert reference_lines(refs) == ["cat", "dog"]
    refs.write_text("cat\n \ndog\n")
    with pytest.raises(DataError, match=f"^{refs}, line 2: an empty line, expected one caption"):
        reference_lines(refs, "caption")


def test_images_and_references_must_pair_up(tmp_path):
    folder = _touch(tmp_path / "imgs", "a.png", "b.png", "c.png")
    refs = tmp_path / "refs.txt"
    refs.write_text("x\ny\nz\n")
    files, lines = paired_files(folder, refs, "class name")
    assert [f.path.name for f in files] == ["a.png", "b.png", "c.png"] and lines == ["x", "y", "z"]
    refs.write_text("x\ny\n")
    with pytest.raises(DataError) as caught:
        paired_files(folder, refs, "class name")
    assert str(caught.value) == (
        f"{folder} has 3 images and {refs} 2 lines: the images and their class names must pair "
        "up one to one, in order"
    )
    listing = tmp_path / "list.txt"
    listing.write_text("imgs/a.png\n")
    with pytest.raises(DataError, match=f"^{listing} has 1 lines and {refs} 2: the images and"):
        paired_files(listing, refs, "class name")


def test_a_listed_file_that_cannot_be_read_names_the_list_line(tmp_path):
    def read(path):
        raise DataError(f"{path}: cannot read this image")

    bad = tmp_path / "a.png"
    with pytest.raises(DataError) as caught:
        read_listed([Listed(bad, "list.txt, line 4")], read)
    assert str(caught.value) == f"list.txt, line 4: {bad}: cannot read this image"
    with pytest.raises(DataError, match=f"^{bad}: cannot read"):  # found in a folder
        read_listed([Listed(bad)], read)
    assert read_listed([Listed(bad, "l, line 1")], lambda p: p.name) == ["a.png"]
