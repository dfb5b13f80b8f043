"""What a paper says per cited key: the citing sentences around each citation, grouped per cited work.

Which commands cite and how their arguments read is ``cite_syntax``; this module
reads the converted document (``latex_text.Document``), whose sentences carry a
marker where each citation stood.
"""

from __future__ import annotations

from collections import OrderedDict

from rqbench.builder.latex_text import Document, find_cites, render_sentence
from rqbench.records import BibEntry, CitationContext, CitedWork

CONTEXT_SENTENCES = 3


def citation_contexts(doc: Document) -> list[CitationContext]:
    """One context per (cite command, key): the citing sentence and up to three sentences either side.

    Sentences come from the same section; a citation in a table row outside a
    caption reads the row as its sentence and the float's caption after it.
    """
    contexts: list[CitationContext] = []
    for sec in doc.sections:
        rendered = [render_sentence(s, doc.cites) for s in sec.sentences]
        for i, sent in enumerate(sec.sentences):
            for cite_index in find_cites(sent):
                call = doc.cites[cite_index]
                before = rendered[max(0, i - CONTEXT_SENTENCES) : i]
                after = rendered[i + 1 : i + 1 + CONTEXT_SENTENCES]
                for key in call.keys:
                    contexts.append(
                        CitationContext(
                            key=key,
                            citing_sentence=rendered[i],
                            before=before,
                            after=after,
                            section=sec.name,
                            command=call.command,
                        )
                    )
        for row in sec.float_rows:
            text = render_sentence(row.text, doc.cites)
            after = [render_sentence(c, doc.cites) for c in row.caption[:CONTEXT_SENTENCES]]
            for cite_index in find_cites(row.text):
                call = doc.cites[cite_index]
                for key in call.keys:
                    contexts.append(
                        CitationContext(
                            key=key,
                            citing_sentence=text,
                            before=[],
                            after=after,
                            section=sec.name,
                            command=call.command,
                        )
                    )
    return contexts


def cited_works(contexts: list[CitationContext], bibliography: list[BibEntry]) -> list[CitedWork]:
    """Group contexts per key in order of first citation: frequency, sections (first-seen order), bib entry."""
    by_key: "OrderedDict[str, list[CitationContext]]" = OrderedDict()
    for ctx in contexts:
        by_key.setdefault(ctx.key, []).append(ctx)
    bib = {e.key: e for e in bibliography}
    works: list[CitedWork] = []
    for key, ctxs in by_key.items():
        sections: list[str] = []
        for c in ctxs:
            if c.section not in sections:
                sections.append(c.section)
        works.append(CitedWork(key=key, bib=bib.get(key), frequency=len(ctxs), sections=sections, contexts=ctxs))
    return works
