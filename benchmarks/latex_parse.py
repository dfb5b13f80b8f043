"""Stage 3 speed, memory and citation recall on the real fixture papers.

Prints, for the same papers in the same run:
  - papers per second of ``parse_paper`` (all of stage 3: inputs, macros,
    text, sentences, contexts, bibliography) beside pylatexenc's
    LatexNodes2Text over the same .tex files (text only), and the ratio;
  - peak traced memory (tracemalloc) of each;
  - citation contexts found vs a plain regex count of (cite command, key)
    pairs in the comment-free merged source: the parser's recall.

Run: .venv/bin/python benchmarks/latex_parse.py [--repeat N]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import tracemalloc

from rqbench.builder.latex_source import load_source
from rqbench.builder.latex_verbatim import split_verbatim
from rqbench.builder.parse import parse_paper
from rqbench.paths import shared_dir

# the regex a quick script would use: \cite-like command, up to two options, one key group
CITE_REGEX = re.compile(r"\\(?!nocite)([a-zA-Z]*cite[a-zA-Z]*)\*?\s*(?:\[[^\]]*\]\s*){0,2}\{([^}]*)\}")


def regex_cite_pairs(text: str) -> int:
    """(command, key) pairs a plain regex finds outside verbatim material."""
    n = 0
    for is_verb, piece in split_verbatim(text):
        if is_verb:
            continue
        for m in CITE_REGEX.finditer(piece):
            n += len({k.strip() for k in m.group(2).split(",") if k.strip()})
    return n


def timed(fn, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return time.perf_counter() - start


def peak_memory(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="passes over the fixture papers (default 3)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args(argv)
    if args.smoke:
        args.repeat = 1
    shared = shared_dir()
    if shared is None:
        print("../shared/fixtures is not beside this checkout", file=sys.stderr)
        return 2
    folders = sorted(p for p in (shared / "fixtures" / "latex").iterdir() if p.is_dir())
    if args.smoke:
        folders = folders[:2]
    from pylatexenc.latex2text import LatexNodes2Text

    files = {f: [f / rel for rel in load_source(f).files] for f in folders}
    raw = {f: [p.read_text(encoding="utf-8", errors="replace") for p in files[f]] for f in folders}
    converter = LatexNodes2Text()

    def ours():
        for f in folders:
            parse_paper(f, "2401.00001")

    failures: set[str] = set()

    def theirs():
        for f in folders:
            for path, text in zip(files[f], raw[f]):
                try:
                    converter.latex_to_text(text)
                except Exception as exc:  # pylatexenc's own crashes are part of the comparison, counted below
                    failures.add(f"{path.relative_to(f.parent)}: {type(exc).__name__}")

    ours()  # warm caches (the sentence splitter's rules compile once per process)
    theirs()
    t_ours = timed(ours, args.repeat)
    t_theirs = timed(theirs, args.repeat)
    n = len(folders) * args.repeat
    m_ours = peak_memory(ours)
    m_theirs = peak_memory(theirs)
    print(f"papers: {len(folders)} fixture folders, {args.repeat} passes")
    print(f"rqbench stage 3 : {n / t_ours:7.2f} papers/s   peak {m_ours / 2**20:7.1f} MiB")
    print(f"pylatexenc text : {n / t_theirs:7.2f} papers/s   peak {m_theirs / 2**20:7.1f} MiB")
    print(
        f"speed ratio (rqbench / pylatexenc): {t_theirs / t_ours:.2f}x   memory ratio: {m_ours / max(m_theirs, 1):.2f}x"
    )
    print(f"pylatexenc raised on {len(failures)} of {sum(len(v) for v in files.values())} files: {sorted(failures)}")
    print()
    print(f"{'paper':34s} {'contexts':>8s} {'regex':>6s} {'recall':>7s}")
    total_found = total_regex = 0
    for f in folders:
        parsed = parse_paper(f, "2401.00001")
        found = sum(len(w.contexts) for w in parsed.cited_works)
        text = load_source(f).text
        body = text[text.find("\\begin{document}") :] if "\\begin{document}" in text else text
        expected = regex_cite_pairs(body)
        total_found += found
        total_regex += expected
        print(f"{f.name:34s} {found:8d} {expected:6d} {found / max(expected, 1):7.2f}")
    print(f"{'all':34s} {total_found:8d} {total_regex:6d} {total_found / max(total_regex, 1):7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
