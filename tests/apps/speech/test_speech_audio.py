"""The wav reader's errors (one line naming the file), log-mel features (25 ms windows every
10 ms; Chan et al. 2016, §4) and SpecAugment's masks (Park et al. 2019, §2)."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile

from attnkit.apps.speech.audio import frame_sizes, log_mel, read_wav, wav_features
from attnkit.apps.speech.specaugment import SpecAugment, mask, spec_augment
from attnkit.errors import DataError

RATE = 8000


def _tone(hz: float, seconds: float = 1.0, rate: int = RATE) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def test_reads_a_mono_wav_as_float32(tmp_path):
    path = tmp_path / "a.wav"
    soundfile.write(path, _tone(440), RATE, subtype="PCM_16")
    samples = read_wav(path, RATE)
    assert samples.dtype == np.float32 and samples.shape == (RATE,)
    np.testing.assert_allclose(samples, _tone(440), atol=1 / 32768)
    assert read_wav(path).shape == (RATE,)  # any rate when none is expected


def _bad(tmp_path, kind):
    path = tmp_path / f"{kind}.wav"
    if kind == "empty":
        soundfile.write(path, np.zeros(0, dtype=np.float32), RATE)
    elif kind == "rate":
        soundfile.write(path, _tone(440, rate=16000), 16000)
    elif kind == "stereo":
        soundfile.write(path, np.stack([_tone(440), _tone(220)], axis=1), RATE)
    elif kind == "garbage":
        path.write_bytes(b"RIFF not really a wav file at all")
    return path


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("empty", "an empty wav \\(no samples\\)"),
        ("rate", "sample rate 16000 Hz, expected 8000 Hz"),
        ("stereo", "2 channels, expected a mono wav"),
        ("garbage", "cannot read it as audio"),
        ("missing", "file not found"),
    ],
)
def test_bad_wavs_are_one_line_naming_the_file(tmp_path, kind, says):
    path = _bad(tmp_path, kind)
    with pytest.raises(ValueError, match=says) as err:
        read_wav(path, RATE)
    assert isinstance(err.value, DataError)
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_frame_sizes_are_25_and_10_ms():
    assert frame_sizes(8000) == (200, 80, 256)
    assert frame_sizes(16000) == (400, 160, 512)


def test_log_mel_shape_and_the_tone_lands_in_its_band():
    features = log_mel(_tone(1000), RATE, n_mels=40)
    assert features.dtype == np.float32 and features.shape == (1 + RATE // 80, 40)
    assert np.isfinite(features).all()
    import librosa  # the mel band whose centre lies nearest 1 kHz must hold the peak

    centres = librosa.mel_frequencies(n_mels=42, fmin=20.0, fmax=RATE / 2)[1:-1]
    peak = np.bincount(features[2:-2].argmax(axis=1)).argmax()
    assert abs(int(peak) - int(np.abs(centres - 1000).argmin())) <= 1
    low, high = log_mel(_tone(300), RATE), log_mel(_tone(3000), RATE)
    assert low.mean(axis=0).argmax() < high.mean(axis=0).argmax()


def test_log_mel_floors_silence_and_reads_a_file(tmp_path):
    silence = log_mel(np.zeros(800, dtype=np.float32), RATE, n_mels=80)
    assert silence.shape == (11, 80)
    np.testing.assert_allclose(silence, np.log(1e-10), rtol=1e-6)
    path = tmp_path / "t.wav"
    soundfile.write(path, _tone(500, 0.5), RATE)
    assert wav_features(path, RATE).shape == (1 + 4000 // 80, 40)
    with pytest.raises(ValueError, match="non-empty"):
        log_mel(np.zeros(0), RATE)


def test_spec_augment_changes_only_whole_masked_bands_and_frames():
    rng = np.random.default_rng(3)
    features = rng.standard_normal((200, 40)).astype(np.float32)
    policy = SpecAugment(freq_masks=2, freq_width=8, time_masks=2, time_width=30, time_ratio=0.2)
    masked, where = spec_augment(features, policy, seed=7)
    assert masked.shape == features.shape and masked.dtype == np.float32 and where.any()
    np.testing.assert_array_equal(masked[~where], features[~where])  # the rest is untouched
    np.testing.assert_allclose(masked[where], features.mean())  # masked to the mean
    bands, frames = where.all(axis=0), where.all(axis=1)
    # every masked entry lies in a whole masked band or a whole masked frame range
    np.testing.assert_array_equal(where, bands[None, :] | frames[:, None])
    assert bands.sum() <= 2 * 8 and frames.sum() <= 2 * min(30, int(0.2 * 200))


def test_spec_augment_is_seeded():
    features = np.random.default_rng(0).standard_normal((300, 40)).astype(np.float32)
    policy = SpecAugment()
    first, where = spec_augment(features, policy, seed=11)
    again, where_again = spec_augment(features, policy, seed=11)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(where, where_again)
    others = [spec_augment(features, policy, seed=s)[1] for s in range(12, 16)]
    assert any((other != where).any() for other in others)


def test_mask_widths_respect_the_policy():
    policy = SpecAugment(freq_masks=1, freq_width=5, time_masks=1, time_width=100, time_ratio=0.1)
    for seed in range(50):
        where = mask(60, 40, policy, np.random.default_rng(seed))
        assert where.all(axis=0).sum() <= 5  # F
        assert where.all(axis=1).sum() <= 6  # p * frames caps T
    assert not mask(60, 40, SpecAugment(0, 8, 0, 70), np.random.default_rng(0)).any()
    with pytest.raises(ValueError, match="time_ratio"):
        SpecAugment(time_ratio=1.5)
    with pytest.raises(ValueError, match="freq_width"):
        SpecAugment(freq_width=-1)
