"""The figures of README's "Stressors beyond the paper" by what was realised, from a bundle of a stressor run::

    python examples/stressor_figures.py out/stressors configs/stressors.toml > stressor-figures.md

The configuration is the one the run read (its roster is found beside it); it must be the bytes the bundle signed
as ``config.toml``.

Per experiment, condition and encoder: the EER in the run's method (``results.csv``). Per condition of one factor
level: what its operators realised on the test utterances of its trial list, as median and range (a room's T30,
``rt60_s_realised``, also inside the playback chain; the SNR of an attack, of its matched-noise control or of added
noise, ``snr_db_realised`` / ``snr_db_measured``) and how many realisations failed. These are the run's own
realisations: every operator draws ``rng_for(seed, utterance, spec)``, so a condition realised again on the same clean
audio gives the same samples (tests/runner/operators/test_determinism.py), and a compound condition applies its factor
A operators first, to the clean audio, so they realise there what they realise alone. Beside every attack, its
matched-noise control (the condition named ``<attack>-matched-noise``) and the attack's effect beyond noise of its
size, EER(attack) - EER(control) on the same trials, with a 95 % percentile interval from the two-way speaker
bootstrap that the audit uses for differences (1,000 resamples, seed 0).

Read a bundle the audit has verified (``audit verify results.csv --bundle ...``): nothing here checks signatures.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from audit.metrics.weighted_roc import weighted_eer
from audit.statistics.contrasts import SpeakerDraws
from audit.statistics.draws import percentile_interval
from runner.design.config import RunConfig, load_config
from runner.design.experiments import ExperimentDesign
from runner.execution.jobs import read_clean_wave
from runner.operators import Chain, NoiseSources
from schemas import CONFIG_FILE, UTTERANCES_FILE, corpus_folder_name, scores_name, trial_list_name

REALISED = {
    "rt60_s_realised": ("T30", "s", 2),
    "snr_db_realised": ("SNR", "dB", 1),
    "snr_db_measured": ("SNR", "dB", 1),
}
CONTROL_SUFFIX = "-matched-noise"
RESAMPLES = 1000


def realised(bundle: Path, config: RunConfig, experiment: ExperimentDesign, condition: str, utts: list[str]) -> str:
    """What ``condition``'s operators realised on ``utts``: each realised figure's median and range, and failures."""
    corpus = config.corpora[experiment.corpus]
    listing = bundle / corpus_folder_name(experiment.corpus, len(config.corpora) == 1) / UTTERANCES_FILE
    paths = pd.read_csv(listing, dtype=str, keep_default_na=False).set_index("utt_id")["path"]
    sources = NoiseSources(utterances=listing, audio_root=corpus.root, music_dir=corpus.music)
    chain = Chain.from_specs(list(config.conditions[condition]), sources=sources)
    values: dict[str, list[float]] = defaultdict(list)
    failed = 0
    for utt in utts:
        wave, sr = read_clean_wave(corpus.root / paths[utt])
        result = chain(wave, sr, seed=config.seed, utt_id=utt)
        failed += result.status == "failed"
        for outcome in result.outcomes:
            for key, value in outcome.details.items():
                if key.rsplit(".", 1)[-1] in REALISED:
                    values[key].append(float(value))
    parts = []
    for key, found in values.items():
        stage, _, figure = key.rpartition(".")
        name, unit, decimals = REALISED[figure]
        low, middle, high = np.quantile(found, [0.0, 0.5, 1.0])
        label = f"{stage} {name}" if stage else name
        parts.append(f"{label} {middle:.{decimals}f} {unit} [{low:.{decimals}f}-{high:.{decimals}f}]")
    return "; ".join([*parts, f"{failed} of {len(utts)} failed"])


def control_of(condition: str) -> str:
    """The matched-noise control's condition of an attack's (``A`` or ``A+B``): ``A-matched-noise`` (``+B``)."""
    head, plus, tail = condition.partition("+")
    return f"{head}{CONTROL_SUFFIX}{plus}{tail}"


def beyond_noise(bundle: Path, attack: pd.Series, control: pd.Series, method: str) -> str:
    """EER(attack) - EER(control) with its two-way speaker bootstrap interval, over the trials both scored."""
    trials = pd.read_csv(bundle / trial_list_name(attack["trial_list_id"]), dtype={"label": int})
    scored = [pd.read_parquet(bundle / scores_name(row["record_id"])) for row in (attack, control)]
    both = ((scored[0]["status"] == "scored") & (scored[1]["status"] == "scored")).to_numpy()
    enrol, test = (trials[column].astype(str).to_numpy()[both] for column in ("enrol_speaker", "test_speaker"))
    draws = SpeakerDraws.of([enrol, test], RESAMPLES, seed=0)
    codes, partners = draws.codes(enrol, test)
    labels = trials["label"].to_numpy()[both]
    eers = [weighted_eer(s["score"].to_numpy()[both], labels, codes, draws.weights, method, partners) for s in scored]
    interval = percentile_interval(eers[0] - eers[1], 0.95)
    estimate = float(attack["eer"]) - float(control["eer"])
    return f"{estimate:+.3f} [{interval['low']:+.3f}, {interval['high']:+.3f}]"


def figures(bundle: Path, config_path: Path) -> str:
    """The Markdown tables: per experiment, conditions by what they realised, EERs per encoder, attacks beyond noise."""
    if config_path.read_bytes() != (bundle / CONFIG_FILE).read_bytes():
        raise SystemExit(f"{config_path} is not the configuration {bundle} was run with ({CONFIG_FILE} differs)")
    config = load_config(config_path)
    results = pd.read_csv(bundle / "results.csv", keep_default_na=False)
    models = sorted(results["model"].unique())
    lines = []
    for experiment in config.experiments:
        rows = results[results["experiment"] == experiment.id].set_index(["condition", "model"])
        lines += [
            f"### {experiment.id}: {experiment.title}",
            "",
            "| condition | realised on its test utterances | " + " | ".join(f"{m} EER" for m in models) + " |",
            "|---|---|" + "---:|" * len(models),
        ]
        conditions = list(dict.fromkeys(rows.index.get_level_values("condition")))
        for condition in conditions:
            record = rows.loc[(condition, models[0])]
            figures_text = ""
            if config.conditions.get(condition):
                trials = pd.read_csv(bundle / trial_list_name(record["trial_list_id"]), dtype=str)
                figures_text = realised(bundle, config, experiment, condition, sorted(trials["test_utt"].unique()))
            eers = " | ".join(f"{float(rows.loc[(condition, m), 'eer']):.3f}" for m in models)
            lines.append(f"| {condition} | {figures_text} | {eers} |")
        attacks = [condition for condition in conditions if control_of(condition) in conditions]
        if attacks:
            lines += [
                "",
                "| attack | its control | " + " | ".join(f"{m}: attack - control" for m in models) + " |",
                "|---|---|" + "---:|" * len(models),
            ]
            for attack in attacks:
                control = control_of(attack)
                cells = [
                    beyond_noise(bundle, rows.loc[(attack, m)], rows.loc[(control, m)], config.eer_method)
                    for m in models
                ]
                lines.append(f"| {attack} | {control} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(figures(Path(sys.argv[1]), Path(sys.argv[2])))
