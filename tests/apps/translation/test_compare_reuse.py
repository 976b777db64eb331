"""`attnkit demo` and `experiment bottleneck` reuse a trained run only when it was trained from
the same config; otherwise they train again and keep the earlier run beside it."""

from dataclasses import replace

from attnkit.apps.translation.experiments.compare import compare


def test_a_changed_config_trains_again_and_keeps_the_old_run(tmp_path, tiny_config):
    cfg = tiny_config()
    cfg = replace(cfg, train=replace(cfg.train, epochs=1))
    compare({"tiny": cfg}, tmp_path, progress=False)
    first = (tmp_path / "tiny" / "model.safetensors").read_bytes()

    compare({"tiny": cfg}, tmp_path, progress=False)  # the same config: reused as it is
    assert (tmp_path / "tiny" / "model.safetensors").read_bytes() == first
    assert [p.name for p in tmp_path.iterdir() if ".replaced-" in p.name] == []

    changed = replace(cfg, train=replace(cfg.train, learning_rate=0.02))
    (result,) = compare({"tiny": changed}, tmp_path, progress=False)
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("tiny.replaced-")]
    assert len(kept) == 1 and (kept[0] / "model.safetensors").read_bytes() == first
    assert (tmp_path / "tiny" / "model.safetensors").read_bytes() != first
