"""Builders of small fake corpus folders that follow each real corpus's layout and naming.

Audio is a short generated tone (16 kHz, 0.25 s unless asked otherwise), written with libsndfile; each tree
also holds the malformed cases an adapter must report: names that break the convention, missing metadata and
files that are not audio at all. The expected table values live in the tests, written out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile

TONE_SECONDS = 0.25
TONE_RATE = 16_000


def write_tone(path: Path, *, seconds: float = TONE_SECONDS, rate: int = TONE_RATE, hz: float = 220.0) -> Path:
    """A sine tone; the format follows the suffix (.wav and .flac PCM 16, .mp3 MPEG layer III)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    time = np.arange(round(seconds * rate)) / rate
    samples = (0.3 * np.sin(2 * np.pi * hz * time)).astype(np.float32)
    if path.suffix == ".mp3":
        soundfile.write(path, samples, rate, format="MP3")
    else:
        soundfile.write(path, samples, rate, subtype="PCM_16")
    return path


def write_garbage(path: Path) -> Path:
    """A file with an audio suffix that holds no audio (a truncated download)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"RIFF\x00\x00not really audio")
    return path


def write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_ravdess(root: Path) -> Path:
    write_tone(root / "Actor_01" / "03-01-01-01-01-01-01.wav")  # neutral, normal, statement 1, male
    write_tone(root / "Actor_02" / "03-01-05-02-02-01-02.wav", seconds=0.5)  # angry, strong, statement 2
    write_tone(root / "Actor_02" / "03-02-03-01-01-02-02.wav")  # song, happy
    write_tone(root / "Actor_01" / "03-01-01-02-01-01-01.wav")  # neutral cannot be strong
    write_tone(root / "Actor_01" / "03-01-09-01-01-01-01.wav")  # emotion 09 does not exist
    write_tone(root / "Actor_01" / "notes.wav")  # not the naming convention
    write_tone(root / "Actor_02" / "03-01-02-01-01-01-03.wav")  # actor 03 filed under Actor_02
    write_garbage(root / "Actor_02" / "03-01-04-01-01-01-02.wav")  # unreadable
    return root


def make_torgo(root: Path) -> Path:
    session = root / "F01" / "Session1"
    write_tone(session / "wav_arrayMic" / "0001.wav")
    write_tone(session / "wav_headMic" / "0001.wav")
    write_text(session / "prompts" / "0001.txt", "Stick\n")
    write_garbage(session / "wav_arrayMic" / "0004.wav")
    write_text(session / "prompts" / "0004.txt", "yes")
    write_tone(root / "FC01" / "Session2" / "wav_headMic" / "0002.wav")  # no prompt file
    write_tone(root / "M01" / "Session2_3" / "wav_arrayMic" / "0003.wav")
    write_text(root / "M01" / "Session2_3" / "prompts" / "0003.txt", "input/images/photo1.jpg")
    write_tone(root / "X99" / "Session1" / "wav_headMic" / "0001.wav")  # not a TORGO speaker code
    write_tone(root / "F01" / "Extra" / "wav_headMic" / "0001.wav")  # not a session folder
    write_tone(root / "F01" / "Session1" / "wav_otherMic" / "0001.wav")  # not a microphone folder
    return root


EARS_STATISTICS = {
    "p001": {
        "age": "36-45",
        "gender": "male",
        "native language": "german",
        "ethnicity": "white or caucasian",
    },
    "p002": {"age": "18-25", "gender": "female", "native language": "prefer not to answer"},
}
EARS_TRANSCRIPTS = {
    "emo_anger_sentences": "I'm so mad right now I could punch a hole in the wall.",
    "rainbow_03_whisper": "People look, but no one ever finds it.",
}


def make_ears(root: Path, *, with_metadata: bool = True) -> Path:
    if with_metadata:
        write_text(root / "speaker_statistics.json", json.dumps(EARS_STATISTICS))
        write_text(root / "transcripts.json", json.dumps(EARS_TRANSCRIPTS))
    write_tone(root / "p001" / "emo_anger_sentences.wav")
    write_tone(root / "p001" / "rainbow_03_whisper.wav")
    write_tone(root / "p001" / "freeform_speech_01.wav")
    write_tone(root / "p002" / "sentences_12_highpitch.wav")
    write_tone(root / "p002" / "nonverbal_laughing.wav")
    write_tone(root / "p002" / "rainbow_01_shouting.wav")  # not one of the seven styles
    write_garbage(root / "p002" / "emo_fear_freeform.wav")
    write_tone(root / "p003" / "rainbow_01_regular.wav")  # speaker missing from speaker_statistics.json
    return root


COMMON_VOICE_HEADER = (
    "client_id\tpath\tsentence_id\tsentence\tsentence_domain\tup_votes\tdown_votes\tage\tgender\taccents\t"
    "variant\tlocale\tsegment"
)
COMMON_VOICE_ROWS = (
    (
        "aaa1",
        "common_voice_en_1.mp3",
        'He said "hello" twice.',
        "twenties",
        "male_masculine",
        "United States English",
    ),
    ("bbb2", "common_voice_en_2.mp3", "A second sentence.", "fourties", "female", ""),
    ("ccc3", "common_voice_en_3.mp3", "A third sentence.", "teens", "non-binary", "Scottish English"),
    ("ddd4", "common_voice_en_4.mp3", "The clip of this row is missing.", "", "", ""),
    ("eee5", "common_voice_en_5.mp3", "This clip is not audio.", "", "", ""),
    ("fff6", "common_voice_en_6.mp3", "Unknown age bin.", "young", "", ""),
)


def make_common_voice(root: Path) -> Path:
    lines = [COMMON_VOICE_HEADER]
    for client, clip, sentence, age, gender, accents in COMMON_VOICE_ROWS:
        lines.append(f"{client}\t{clip}\tsid\t{sentence}\t\t2\t0\t{age}\t{gender}\t{accents}\t\ten\t")
    write_text(root / "validated.tsv", "\n".join(lines) + "\n")
    for _, clip, *_ in COMMON_VOICE_ROWS:
        if clip.endswith("_5.mp3"):
            write_garbage(root / "clips" / clip)
        elif not clip.endswith("_4.mp3"):
            write_tone(root / "clips" / clip, seconds=0.5)
    return root


def make_l2_arctic(root: Path) -> Path:
    write_tone(root / "ABA" / "wav" / "arctic_a0001.wav")
    write_text(root / "ABA" / "transcript" / "arctic_a0001.txt", "Author of the danger trail, Philip Steels, etc.")
    write_garbage(root / "ABA" / "wav" / "arctic_a0002.wav")
    write_tone(root / "ABA" / "wav" / "readme.wav")  # not an arctic prompt name
    write_tone(root / "SKA" / "wav" / "arctic_b0002.wav")  # no transcript
    write_tone(root / "suitcase_corpus" / "wav" / "aba.wav", seconds=1.0)
    write_text(root / "suitcase_corpus" / "transcript" / "aba.txt", "so the suitcase story")
    write_tone(root / "XYZ" / "wav" / "arctic_a0003.wav")  # not in the published speaker table
    write_tone(root / "ABA" / "annotation" / "arctic_a0001.wav")  # not under wav/
    return root


VOX1_META = (
    "VoxCeleb1 ID\tVGGFace1 ID\tGender\tNationality\tSet\n"
    "id10001\tA.J._Buckley\tm\tIreland\tdev\n"
    "id10002\tA.R._Rahman\tf\tIndia\ttest\n"
)
VOX1_TRIALS = (
    "1 id10001/1zcIwhmdeo4/00001.wav id10001/1zcIwhmdeo4/00002.wav\n"
    "0 id10001/1zcIwhmdeo4/00001.wav id10002/abcdEFGhijk/00001.wav\n"
    "0 id10002/abcdEFGhijk/00001.wav id10009/zzzzzzzzzzz/00001.wav\n"
)


def make_voxceleb1(root: Path, *, with_metadata: bool = True) -> Path:
    if with_metadata:
        write_text(root / "vox1_meta.csv", VOX1_META)
    write_text(root / "veri_test2.txt", VOX1_TRIALS)
    write_tone(root / "wav" / "id10001" / "1zcIwhmdeo4" / "00001.wav")
    write_tone(root / "wav" / "id10001" / "1zcIwhmdeo4" / "00002.wav")
    write_tone(root / "wav" / "id10002" / "abcdEFGhijk" / "00001.wav")
    write_garbage(root / "wav" / "id10002" / "abcdEFGhijk" / "00002.wav")
    write_tone(root / "wav" / "id10003" / "Q1w2E3r4T5y" / "00001.wav")  # not in vox1_meta.csv
    write_tone(root / "wav" / "id10001" / "1zcIwhmdeo4" / "clip.wav")  # not a segment number
    return root


SPOOF_MANIFEST = (
    "path,system,system_version,target_speaker,source_speaker\n"
    "vits/id10001_001.wav,VITS,1.0.0 (vctk),id10001,\n"
    "knnvc/id10002_from_id10001.flac,kNN-VC,2023-06,id10002,id10001\n"
    "vits/id10002_001.wav,VITS,,id10002,\n"  # no system version
    "vits/missing.wav,VITS,1.0.0 (vctk),id10001,\n"  # the file is not there
    "vits/broken.wav,VITS,1.0.0 (vctk),id10001,\n"  # not audio
    "../outside.wav,VITS,1.0.0 (vctk),id10001,\n"  # leaves the folder
    "vits/id10001_001.wav,VITS,1.0.0 (vctk),id10001,\n"  # listed twice
)


def make_spoofs(root: Path) -> Path:
    """A spoof folder of two systems: manifest rows that cannot be used and a file the manifest omits."""
    write_text(root / "manifest.csv", SPOOF_MANIFEST)
    write_tone(root / "vits" / "id10001_001.wav")
    write_tone(root / "knnvc" / "id10002_from_id10001.flac", seconds=0.5)
    write_tone(root / "vits" / "id10002_001.wav")
    write_garbage(root / "vits" / "broken.wav")
    write_tone(root / "vits" / "unlisted.wav")
    return root


LA_CM_TRAIN = (
    "LA_0079 LA_T_1000001 - - bonafide\n"
    "LA_0079 LA_T_1000002 - A01 spoof\n"
    "LA_0080 LA_T_1000003 - - bonafide\n"
    "LA_0080 LA_T_1000004 - A05 spoof\n"
    "LA_0080 LA_T_1000005 A05 spoof\n"  # a field short
)
LA_CM_EVAL = (
    "LA_0039 LA_E_2000001 - - bonafide\n"
    "LA_0039 LA_E_2000002 - A17 spoof\n"
    "LA_0040 LA_E_2000003 - - bonafide\n"
    "LA_0040 LA_E_2000004 - A99 spoof\n"  # not a published attack
    "LA_0040 LA_E_2000005 - A07 spoof\n"  # its audio is missing
    "LA_0039 LA_E_2000006 - - spoof\n"  # a spoof without an attack
)


def make_asvspoof2019_la(root: Path) -> Path:
    """The LA folder: train and eval protocols (no dev), eval enrolment lists, flac audio with the faults above,
    an unreadable enrolment file and a file no list names."""
    write_text(root / "ASVspoof2019_LA_cm_protocols" / "ASVspoof2019.LA.cm.train.trn.txt", LA_CM_TRAIN)
    write_text(root / "ASVspoof2019_LA_cm_protocols" / "ASVspoof2019.LA.cm.eval.trl.txt", LA_CM_EVAL)
    asv = root / "ASVspoof2019_LA_asv_protocols"
    write_text(asv / "ASVspoof2019.LA.asv.eval.female.trn.txt", "LA_0039 LA_E_3000001,LA_E_3000002\n")
    write_text(asv / "ASVspoof2019.LA.asv.eval.male.trn.txt", "LA_0040 LA_E_3000003\n")
    for number in range(1000001, 1000005):
        write_tone(root / "ASVspoof2019_LA_train" / "flac" / f"LA_T_{number}.flac")
    for number in (2000001, 2000002, 2000003, 2000004, 3000001, 3000002, 2000009):
        write_tone(root / "ASVspoof2019_LA_eval" / "flac" / f"LA_E_{number}.flac")
    write_garbage(root / "ASVspoof2019_LA_eval" / "flac" / "LA_E_3000003.flac")
    return root
