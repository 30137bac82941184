"""Corpora: the embedded default corpus, the adapters that turn corpus folders into utterance tables, and spoof
folders (converted or synthesised speech with a manifest).

Importing this package registers every adapter, so ``load_corpus(name, root)`` knows them all.
"""

from audit.scores import TrialListError, read_kaldi_trials, read_voxceleb_trials
from runner.corpora import (
    asterisk,
    asvspoof2019,
    common_voice,
    debian,
    ears,
    fillets,
    l2_arctic,
    ravdess,
    spoof,
    torgo,
    voxceleb1,
    world_proxy,
)
from runner.corpora.asterisk import build_default_corpus
from runner.corpora.base import (
    ADAPTERS,
    SPOOF_ADAPTERS,
    CorpusError,
    CorpusTable,
    Problem,
    load_corpus,
    read_utterances,
)
from runner.corpora.content import content_problems

__all__ = [
    "ADAPTERS",
    "SPOOF_ADAPTERS",
    "CorpusError",
    "CorpusTable",
    "Problem",
    "TrialListError",
    "asterisk",
    "asvspoof2019",
    "build_default_corpus",
    "common_voice",
    "content_problems",
    "debian",
    "ears",
    "fillets",
    "l2_arctic",
    "load_corpus",
    "ravdess",
    "read_kaldi_trials",
    "read_utterances",
    "read_voxceleb_trials",
    "spoof",
    "torgo",
    "voxceleb1",
    "world_proxy",
]
