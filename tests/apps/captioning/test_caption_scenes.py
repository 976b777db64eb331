"""The scene generator's truth: boxes match the painted pixels, captions match the scene."""

import numpy as np
import pytest

from attnkit.apps.captioning.scenes import (
    BOS,
    COLOURS,
    EOS,
    PAD,
    SHAPES,
    Vocabulary,
    make_split,
    shape_mask,
    vocabulary,
)


@pytest.fixture(scope="module")
def scenes():
    return make_split("valid", 60, seed=3)


def test_splits_are_deterministic_and_distinct():
    a, b = make_split("test", 5, seed=1), make_split("test", 5, seed=1)
    assert [s.caption for s in a] == [s.caption for s in b]
    assert all(np.array_equal(x.image, y.image) for x, y in zip(a, b, strict=True))
    other = make_split("train", 5, seed=1)
    assert not any(np.array_equal(x.image, y.image) for x, y in zip(a, other, strict=True))
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        make_split("dev", 5)


def test_boxes_are_the_bounding_boxes_of_the_painted_pixels(scenes):
    for scene in scenes:
        assert scene.image.shape == (32, 32, 3) and scene.image.dtype == np.float32
        for obj, mask in zip(scene.objects, scene.masks, strict=True):
            ys, xs = np.nonzero(mask)
            assert obj.box == (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
            # exactly the object's colour inside the mask
            colour = np.asarray(COLOURS[obj.colour], np.float32)
            assert np.allclose(scene.image[mask], colour)
        # pixels of an object colour appear only inside the objects of that colour
        for name, rgb in COLOURS.items():
            painted = np.all(np.isclose(scene.image, np.asarray(rgb, np.float32)), axis=-1)
            owned = np.zeros_like(painted)
            for obj, mask in zip(scene.objects, scene.masks, strict=True):
                if obj.colour == name:
                    owned |= mask
            assert np.array_equal(painted, owned)
        # boxes are disjoint
        boxes = scene.boxes
        for i in range(len(boxes)):
            for j in range(i):
                (a0, b0, a1, b1), (c0, d0, c1, d1) = boxes[i], boxes[j]
                assert a1 <= c0 or c1 <= a0 or b1 <= d0 or d1 <= b0


def test_captions_name_the_objects_left_to_right_with_true_relations(scenes):
    counts = {2: 0, 3: 0}
    for scene in scenes:
        words = scene.caption.split()
        assert set(words) <= set(vocabulary())
        counts[len(scene.objects)] += 1
        # "a COLOUR SHAPE (REL a COLOUR SHAPE)*" with REL one of "left of", "above", "below"
        said, relations, i = [], [], 0
        while i < len(words):
            assert words[i] == "a"
            said.append((words[i + 1], words[i + 2]))
            i += 3
            if i < len(words):
                two = words[i : i + 2] == ["left", "of"]
                relations.append("left of" if two else words[i])
                i += 2 if two else 1
        assert said == [(o.colour, o.shape) for o in scene.objects]
        assert len(set(said)) == len(said)  # each (colour, shape) at most once
        centres = [o.centre for o in scene.objects]
        assert [c[0] for c in centres] == sorted(c[0] for c in centres)
        assert len(relations) == len(centres) - 1
        for rel, (ax, ay), (bx, by) in zip(relations, centres, centres[1:], strict=False):
            dx, dy = bx - ax, by - ay
            truth = "left of" if dx > abs(dy) else ("above" if dy > 0 else "below")
            assert rel == truth
        assert scene.noun_objects == list(range(len(scene.objects)))
    assert counts[2] > 10 and counts[3] > 10


def test_shape_masks_have_the_expected_areas():
    areas = {s: shape_mask(s, 30, 40, 5, 5).sum() / 900 for s in SHAPES}
    assert areas["square"] == 1.0
    assert abs(areas["circle"] - np.pi / 4) < 0.03
    assert abs(areas["triangle"] - 0.5) < 0.04
    with pytest.raises(ValueError, match="unknown shape 'star'"):
        shape_mask("star", 5, 10, 0, 0)


def test_vocabulary_round_trip(tmp_path, scenes):
    vocab = Vocabulary.for_scenes()
    assert vocab.words[:3] == ["<pad>", "<bos>", "<eos>"]
    for scene in scenes[:10]:
        ids = vocab.encode(scene.caption)
        assert ids[0] == BOS and ids[-1] == EOS
        assert " ".join(vocab.decode(ids[1:] + [PAD, 7])) == scene.caption  # stops at EOS
    vocab.save(tmp_path / "vocab.json")
    assert Vocabulary.load(tmp_path / "vocab.json").words == vocab.words
    with pytest.raises(KeyError, match="'hexagon' is not in the vocabulary"):
        vocab.encode("a red hexagon")
