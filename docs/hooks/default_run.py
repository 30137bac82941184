"""What the default run shows, on the README and the run tutorial, written from a real run, never by hand.

The default run takes about 20 minutes, too long for the test suite, so its numbers reach the pages in two steps:

- ``python docs/hooks/default_run.py --from out/default`` reads the bundle that ``nox -s reproduce`` wrote
  (``results.csv``, ``config.toml``, ``operators.json``, ``trials/``, ``scores/``, ``corpus/`` and the report's EER
  heatmap) into ``docs/assets/default-run.json`` (run id, corpus, what the run used, the work it did, the EER table's
  values) and copies the heatmap to ``docs/assets/default-run-eer.png``; then it renders the pages.
- ``python docs/hooks/default_run.py`` renders the block between ``<!-- generated: default-run ... -->`` and
  ``<!-- end generated: default-run -->`` of each page from that committed summary; ``--check`` only names the
  stale pages (exit 1). As an MkDocs hook it refuses to build from a stale page, and ``tests/docs`` fails on one.

Rendering needs the standard library alone (the docs environment has no pandas); reading a bundle needs the audit's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "docs" / "assets" / "default-run.json"
FIGURE = ROOT / "docs" / "assets" / "default-run-eer.png"
REPORT_FIGURE = "report/figures/eer_heatmap.png"  # the report's EER heatmap (its first part), condition x encoder
PAGES = (ROOT / "README.md", ROOT / "docs" / "tutorials" / "run-the-benchmark.md")
BEGIN = "<!-- generated: default-run (python docs/hooks/default_run.py renews it from docs/assets/default-run.json) -->"
END = "<!-- end generated: default-run -->"
BLOCK = re.compile(rf"(?ms)^{re.escape(BEGIN)}\n(?P<body>.*?)^{re.escape(END)}$")
# A cell of the EER table: EXPERIMENT|CONDITION or EXPERIMENT|CONDITION|SUBGROUP (a results row per encoder).
CELL = re.compile(r"(?P<experiment>[A-Z]\d+)\|(?P<condition>[^\s,;|]+)(?:\|(?P<subgroup>[^\s,;|/]+))?")
# The EER table of the default: a row's label, then its cells with the separators they are printed with.
ROWS: tuple[tuple[str, str], ...] = (
    ("clean (D01 list)", "D01|clean"),
    ("pink noise 20 / 10 / 0 dB (synthetic)", "D01|pink-20dB / D01|pink-10dB / D01|pink-0dB"),
    ("Opus 8 kbit/s, AMR-NB 12.2 kbit/s", "D01|opus-8k, D01|amrnb-12k2"),
    ("pink 0 dB + Opus, pink 0 dB + AMR-NB", "D01|pink-0dB+opus-8k, D01|pink-0dB+amrnb-12k2"),
    (
        "white noise 10 dB; + 10 % random / bursty packet loss",
        "D02|white-10dB; D02|loss-random-10+white-10dB / D02|loss-bursty-10+white-10dB",
    ),
    (
        "telephony (G.711 mu-law), MP3 16 kbit/s, music 5 dB",
        "D03|clean->telephony-mulaw, D03|clean->mp3-16k, D03|clean->music-5dB",
    ),
    ("speed x1.1, tempo x0.9", "D03|clean->speed-1.1, D03|clean->tempo-0.9"),
    ("clean F / M (enrolment gender)", "D04|clean|gender=F / D04|clean|gender=M"),
    ("babble 0 dB F / M", "D04|babble-0dB|gender=F / D04|babble-0dB|gender=M"),
    (
        "D05: clean; WORLD proxy spoofs of the enrolled speaker (targets against spoofs)",
        "D05|clean->clean; D05|clean->world-proxy",
    ),
)


class BundleReadError(Exception):
    """A bundle file that is missing or does not hold what the summary needs: the file and the problem."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")


def cells(rows: Sequence[tuple[str, str]]) -> list[str]:
    """Every cell token of the table's rows, in order."""
    return [match[0] for _, pattern in rows for match in CELL.finditer(pattern)]


# -- reading a bundle (pandas: the audit's environment) ----------------------------------------------------------


def _read_csv(bundle: Path, name: str, **kwargs: Any) -> Any:
    import pandas as pd

    path = bundle / name
    if not path.is_file():
        raise BundleReadError(str(path), "not found (is this the folder nox -s reproduce wrote?)")
    return pd.read_csv(path, **kwargs)


def _chain_key(conditions: dict[str, Any], name: str) -> str:
    """The operator chain a condition applies to a side, as a comparable key: ``clean``, a spoof condition and a
    metadata selection apply none; ``a+b`` applies ``a``'s then ``b``'s."""
    specs: list[Any] = []
    for part in name.split("+") if name != "clean" else ():
        value = conditions.get(part)
        if value is None:
            raise BundleReadError("config.toml", f"no condition {part!r} (named by results.csv's {name!r})")
        specs += value if isinstance(value, list) else []
    return json.dumps(specs, sort_keys=True)


def summarise(bundle: Path, rows: Sequence[tuple[str, str]] = ROWS) -> dict[str, Any]:
    """The summary of a run's bundle: its id, its corpus, what it used, the work it did and the EER of each cell of
    ``rows`` for each encoder (the ``eer`` column, in the run's ``eer_method``)."""
    import numpy as np
    import pandas as pd

    bundle = Path(bundle)
    results = _read_csv(bundle, "results.csv", dtype={"trial_list_id": str, "record_id": str, "subgroup": str})
    config_path = bundle / "config.toml"
    if not config_path.is_file():
        raise BundleReadError(str(config_path), "not found")
    config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    operators_path = bundle / "operators.json"
    if not operators_path.is_file():
        raise BundleReadError(str(operators_path), "not found")
    operators = json.loads(operators_path.read_text(encoding="utf-8"))

    def one(column: str) -> Any:
        return one_value(results[column], bundle / "results.csv")

    encoders = list(config["encoders"]["labels"])
    countermeasure = config.get("countermeasure", {}).get("label")
    corpus = str(one("corpus"))
    folder = bundle / "corpus" / corpus if (bundle / "corpus" / corpus).is_dir() else bundle / "corpus"
    utterances = _read_csv(folder, "utterances.csv", dtype={"speaker": str})
    problems = _read_csv(folder, "problems.csv", dtype=str)

    # Every trial list once; the sides of each record: (utterance, the chain applied to it).
    conditions = config.get("conditions", {})
    lists = {
        list_id: _read_csv(bundle, f"trials/{list_id}.csv", dtype=str) for list_id in results["trial_list_id"].unique()
    }
    genuine: set[str] = set()
    speakers: set[str] = set()
    spoofs: set[str] = set()
    for frame in lists.values():
        spoof = frame["trial_kind"].eq("spoof") if "trial_kind" in frame.columns else pd.Series(False, frame.index)
        genuine |= set(frame["enrol_utt"]) | set(frame.loc[~spoof, "test_utt"])
        speakers |= set(frame["enrol_speaker"]) | set(frame.loc[~spoof, "test_speaker"])
        spoofs |= set(frame.loc[spoof, "test_utt"])
    scored_by_cm: set[tuple[str, str]] = set()
    if countermeasure is not None:
        for row in results.itertuples():
            path = bundle / "scores" / f"{row.record_id}.parquet"
            if not path.is_file():
                raise BundleReadError(str(path), "not found")
            scores = pd.read_parquet(path)
            if "cm_score" not in scores.columns:
                continue
            frame = lists[row.trial_list_id].iloc[scores["trial_index"].to_numpy()]
            chain = _chain_key(conditions, str(row.test_condition))
            scored = np.isfinite(scores["cm_score"].to_numpy(dtype=float))
            scored_by_cm |= {(utt, chain) for utt in frame["test_utt"].to_numpy()[scored]}

    chains = operators.get("chains", {}).values()
    realised = sum(chain["applied"] + chain["fallback"] for chain in chains)
    failed = sum(chain["failed"] for chain in chains)
    encoder_failures = sum(entry["failed"] for entry in operators.get("encoders", {}).values())

    eer: dict[str, dict[str, float]] = {}
    subgroups = results["subgroup"].fillna("")
    for token in cells(rows):
        experiment, condition, subgroup = ([*token.split("|"), ""])[:3]
        chosen = results[
            (results["experiment"] == experiment) & (results["condition"] == condition) & (subgroups == subgroup)
        ]
        values = {}
        for label in encoders:
            row = chosen[chosen["model"] == label]
            if len(row) != 1:
                raise BundleReadError(
                    str(bundle / "results.csv"), f"expected one row for {token} {label}, found {len(row)}"
                )
            values[label] = float(row["eer"].iloc[0])
        eer[token] = values

    figure = None
    if (bundle / REPORT_FIGURE).is_file():
        figure = {"source": REPORT_FIGURE, "sha256": hashlib.sha256((bundle / REPORT_FIGURE).read_bytes()).hexdigest()}
    return {
        "run_id": str(one("run_id")),
        "config": config.get("run", {}).get("name"),
        "eer_method": str(one("eer_method")),
        "corpus": {
            "name": corpus,
            "speakers": int(utterances["speaker"].nunique()),
            "utterances": len(utterances),
            "hours": round(float(utterances["duration_s"].sum()) / 3600, 2),
            "sample_rate_hz": int(one_value(utterances["sample_rate"], folder / "utterances.csv")),
            "problems": len(problems),
        },
        "used": {
            "utterances": len(genuine),
            "speakers": len(speakers),
            "spoofs": len(spoofs),
            "experiments": int(results["experiment"].nunique()),
            "trial_lists": len(lists),
            "trials": sum(len(frame) for frame in lists.values()),
            "records": len(results),
            "encoders": encoders,
            "countermeasure": countermeasure,
        },
        "work": {
            "realisations": realised + failed,
            "embeddings": realised * len(encoders) - encoder_failures,
            "countermeasure_scores": len(scored_by_cm),
            "operator_failures": failed,
            "encoder_failures": encoder_failures,
        },
        "eer": eer,
        "figure": figure,
    }


def one_value(values: Any, where: Path) -> Any:
    """The single value of a column (the run id of every row, the sample rate of the whole corpus)."""
    unique = values.dropna().unique()
    if len(unique) != 1:
        raise BundleReadError(str(where), f"expected one {values.name}, found {sorted(map(str, unique))}")
    return unique[0].item() if hasattr(unique[0], "item") else unique[0]


# -- rendering (standard library only) ---------------------------------------------------------------------------


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _values(pattern: str, eer: dict[str, dict[str, float]], model: str) -> str:
    """A row's pattern with each cell replaced by the model's EER there, at three decimals."""
    return CELL.sub(lambda match: f"{eer[match[0]][model]:.3f}", pattern)


def render(summary: dict[str, Any], page: Path, rows: Sequence[tuple[str, str]] = ROWS) -> str:
    """The generated block of ``page`` (its body, between the markers) from ``summary``."""
    corpus, used, work = summary["corpus"], summary["used"], summary["work"]
    encoders = used["encoders"]
    spoofs = f" and {_count(used['spoofs'], 'WORLD proxy spoof')} of them" if used["spoofs"] else ""
    models = _count(len(encoders), "encoder") + (" and a countermeasure" if used["countermeasure"] else "")
    failures = work["operator_failures"] + work["encoder_failures"]
    lines = [
        "| the embedded default (`configs/default.toml`) | |",
        "|---|---|",
        f"| corpus | {corpus['speakers']} speakers of Debian's asterisk prompts, {corpus['utterances']:,} utterances, "
        f"{corpus['hours']:.2f} h, {corpus['sample_rate_hz'] / 1000:g} kHz ({corpus['problems']:,} prompts left out, "
        "each with its reason in `problems.csv`) |",
        f"| used | {_count(used['utterances'], 'utterance')} of {used['speakers']} speakers{spoofs}, "
        f"{_count(used['experiments'], 'experiment')}, {_count(used['trial_lists'], 'trial list')}, "
        f"{_count(used['trials'], 'trial')}, {_count(used['records'], 'record')}, {models} |",
        f"| work | {work['realisations']:,} (utterance, condition) realisations, "
        f"{_count(work['embeddings'], 'embedding')} and {_count(work['countermeasure_scores'], 'countermeasure score')}"
        f", {_count(failures, 'operator or encoder failure')} |",
        "",
        f"EER ({summary['eer_method'].upper()}, fraction) per encoder, from `out/default/results.csv` of run "
        f"`{summary['run_id']}`:",
        "",
        "| condition (test side) | " + " | ".join(encoders) + " |",
        "|---|" + "---:|" * len(encoders),
    ]
    for label, pattern in rows:
        shown = [_values(pattern, summary["eer"], model) for model in encoders]
        lines.append(f"| {label} | " + " | ".join(shown) + " |")
    if summary.get("figure"):
        link = Path(os.path.relpath(FIGURE, page.resolve().parent)).as_posix()
        lines += [
            "",
            f"![EER per encoder and condition of run {summary['run_id']}, the report's heatmap]({link})",
        ]
    return "\n".join(lines) + "\n"


def rendered(text: str, summary: dict[str, Any], page: Path) -> str:
    """``text`` (a page) with its generated block rendered from ``summary``; a page without one is an error."""
    if len(BLOCK.findall(text)) != 1:
        raise BundleReadError(str(page), f"expected one block between {BEGIN!r} and {END!r}")
    return BLOCK.sub(lambda _: f"{BEGIN}\n{render(summary, page)}{END}", text)


def load_summary(path: Path = SUMMARY) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def stale(pages: Iterable[Path] = PAGES, summary: dict[str, Any] | None = None) -> list[Path]:
    """The pages whose generated block differs from what the summary renders, and the figure when its digest
    is not the summary's."""
    summary = load_summary() if summary is None else summary
    out = [page for page in pages if (text := page.read_text(encoding="utf-8")) != rendered(text, summary, page)]
    figure = summary.get("figure")
    if figure and (not FIGURE.is_file() or hashlib.sha256(FIGURE.read_bytes()).hexdigest() != figure["sha256"]):
        out.append(FIGURE)
    return out


def write_summary(bundle: Path) -> dict[str, Any]:
    """Read ``bundle`` into the committed summary, and copy its report's heatmap beside it."""
    summary = summarise(bundle)
    if summary["figure"]:
        FIGURE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(bundle / REPORT_FIGURE, FIGURE)
    SUMMARY.parent.mkdir(parents=True, exist_ok=True)
    SUMMARY.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary


def on_pre_build(config: Any) -> None:
    """MkDocs hook: a stale generated block stops the build, naming the command that renews it."""
    from mkdocs.exceptions import PluginError

    if old := stale():
        names = ", ".join(str(path.relative_to(ROOT)) for path in old)
        raise PluginError(f"{names}: stale default-run block or figure; run python docs/hooks/default_run.py")


def main(argv: list[str]) -> int:
    try:
        if argv == ["--check"]:
            old = stale()
            for path in old:
                print(f"{path.relative_to(ROOT)}: stale (python docs/hooks/default_run.py renews it)")
            return 1 if old else 0
        if len(argv) == 2 and argv[0] == "--from":
            summary = write_summary(Path(argv[1]))
            print(f"wrote {SUMMARY.relative_to(ROOT)} from run {summary['run_id']} ({argv[1]})")
        elif argv:
            print("usage: python docs/hooks/default_run.py [--from BUNDLE | --check]", file=sys.stderr)
            return 2
        summary = load_summary()
        for page in PAGES:
            text = page.read_text(encoding="utf-8")
            page.write_text(rendered(text, summary, page), encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT)}")
    except BundleReadError as error:
        print(error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
