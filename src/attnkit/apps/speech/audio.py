"""Waveforms from wav files and their log-mel features, the speech application's front end.

Libraries, both kept by the audio community rather than written here:

- ``soundfile`` (libsndfile through CFFI) reads the wav files: PCM of any width and float wavs,
  as float32 in ``[-1, 1]``.
- ``librosa`` computes the short-time Fourier transform and the mel filterbank. ``torchaudio``
  was the first choice (its ``MelSpectrogram`` runs on tensors), but no torchaudio release
  matches torch 2.13 (the newest on PyPI, 2.11, pins its own torch), and a mismatched one
  would pull a second torch; librosa depends on NumPy only and is what ESPnet and
  SpeechBrain check their own front ends against.

Features follow the usual recipe of attention-based recognisers (Chan et al. 2016, "Listen,
Attend and Spell", §4: 40 log-mel filterbank energies every 10 ms; ESPnet's ``LogMel``): 25 ms
Hann windows every 10 ms, power spectrum, a Slaney mel filterbank from 20 Hz to the Nyquist
frequency, natural log of ``max(energy, floor)`` (ESPnet clamps at ``1e-10``, which is the
default here). Frames are centred (librosa's ``center=True``, zero padding), so a wav of
``n`` samples gives ``1 + n // hop`` frames.

Every error on a bad file is one line that starts with the file (:class:`DataError`, a
``ValueError``): a missing or unreadable file, a file without samples, a sample rate other than
the expected one (both named), and a file with more than one channel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnkit.errors import DataError
from attnkit.textfiles import check_file

WINDOW_MS, HOP_MS = 25.0, 10.0  # Chan et al. 2016, §4; ESPnet, Kaldi
FMIN = 20.0  # Hz: Kaldi's and ESPnet's low edge of the filterbank
FLOOR = 1e-10  # ESPnet's LogMel: log(clamp(mel, min=1e-10))


def read_wav(path: str | Path, sample_rate: int | None = None) -> np.ndarray:
    """The samples of a mono wav file as float32 ``(samples,)`` in ``[-1, 1]``.

    Args:
        path: the wav file (any format libsndfile reads: PCM, float, FLAC too).
        sample_rate: the rate the caller expects, in Hz; a file at another rate is an error
            (nothing is resampled silently). ``None`` accepts any rate.
    Raises:
        DataError: one line naming the file: missing, unreadable, empty, another sample rate,
            or more than one channel.
    """
    import soundfile

    path = check_file(path)
    try:
        with soundfile.SoundFile(str(path)) as wav:
            rate, channels, frames = wav.samplerate, wav.channels, wav.frames
            if channels != 1:
                raise DataError(f"{path}: {channels} channels, expected a mono wav (1 channel)")
            if sample_rate is not None and rate != sample_rate:
                raise DataError(
                    f"{path}: sample rate {rate} Hz, expected {sample_rate} Hz (resample it first)"
                )
            if frames <= 0:
                raise DataError(f"{path}: an empty wav (no samples)")
            samples = wav.read(dtype="float32", always_2d=True)  # (samples, 1)
    except soundfile.SoundFileError as err:  # libsndfile's reason, on one line
        reason = " ".join(str(err).split())
        raise DataError(f"{path}: cannot read it as audio ({reason})") from None
    except OSError as err:
        raise DataError(f"{path}: cannot read it ({err.strerror or err})") from None
    if samples.shape[0] == 0:  # a header that promised samples the file does not hold
        raise DataError(f"{path}: an empty wav (no samples)")
    return np.ascontiguousarray(samples[:, 0])  # (samples,)


def frame_sizes(sample_rate: int) -> tuple[int, int, int]:
    """``(window, hop, n_fft)`` in samples at ``sample_rate``: 25 ms, 10 ms, and the smallest
    power of two that holds the window (8 kHz: 200, 80, 256; 16 kHz: 400, 160, 512)."""
    window = round(sample_rate * WINDOW_MS / 1000)
    hop = round(sample_rate * HOP_MS / 1000)
    return window, hop, 1 << (window - 1).bit_length()


def log_mel(
    samples: np.ndarray,
    sample_rate: int,
    n_mels: int = 40,
    floor: float = FLOOR,
) -> np.ndarray:
    """Log-mel filterbank energies (module docstring; Chan et al. 2016, §4).

    Args:
        samples: ``(samples,)`` float waveform in ``[-1, 1]``.
        sample_rate: its rate in Hz.
        n_mels: mel bands (40 in Listen, Attend and Spell; 80 in ESPnet's recipes).
        floor: energies below it are raised to it before the log (silence made of zeros then
            reads ``log(floor)``, not ``-inf``).
    Returns:
        float32 ``(frames, n_mels)`` with ``frames = 1 + samples // hop``.
    """
    import librosa

    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim != 1 or samples.size == 0:
        raise ValueError(f"log_mel takes a non-empty (samples,) waveform, got {samples.shape}")
    if floor <= 0:
        raise ValueError(f"floor must be positive, got {floor}")
    window, hop, n_fft = frame_sizes(sample_rate)
    spectrum = librosa.stft(samples, n_fft=n_fft, hop_length=hop, win_length=window)
    power = np.abs(spectrum) ** 2  # (n_fft // 2 + 1, frames)
    bank = librosa.filters.mel(
        sr=sample_rate, n_fft=n_fft, n_mels=n_mels, fmin=FMIN, fmax=sample_rate / 2
    )  # (n_mels, n_fft // 2 + 1)
    mel = bank @ power  # (n_mels, frames)
    return np.log(np.maximum(mel, floor)).T.astype(np.float32)  # (frames, n_mels)


def wav_features(path: str | Path, sample_rate: int, n_mels: int = 40) -> np.ndarray:
    """:func:`log_mel` of the wav at ``path`` (read by :func:`read_wav` at ``sample_rate``):
    float32 ``(frames, n_mels)``."""
    return log_mel(read_wav(path, sample_rate), sample_rate, n_mels)
