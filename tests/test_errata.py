"""The errata pages (docs/errata/) stay in step with the claims registry and the findings pages.

Every printed statement the registry expects to refute is named on its topic's errata page;
every claim id an errata page names exists; and every link from an errata page to a section
(of a findings page or of another errata page) lands on a heading or anchor that exists.
"""

from __future__ import annotations

import pathlib
import re

import pytest
from markdown.extensions.toc import slugify

from ntsim.claims import REGISTRY

ROOT = pathlib.Path(__file__).resolve().parents[1]
ERRATA = ROOT / "docs" / "errata"
TOPICS = sorted({claim.topic for claim in REGISTRY})
IDS = {claim.id for claim in REGISTRY}
PRINTED_REFUTED = sorted(
    claim.id for claim in REGISTRY if claim.reading.kind == "printed" and claim.expect == "refuted"
)
PAGES = sorted(ERRATA.glob("*.md"))
# `topic.result.aspect` in backticks; file names such as `stability.md` have one dot only.
_TOPIC = "|".join(map(re.escape, TOPICS))
CLAIM_ID = re.compile(rf"`((?:{_TOPIC})(?:\.[A-Za-z0-9_]+){{2,}})`")
LINK = re.compile(r"\]\(([^)\s#]*)#([^)\s]+)\)")


def _anchors(page: pathlib.Path) -> set[str]:
    """Ids a page defines: its headings' toc slugs (code spans stripped) and explicit ids."""
    text = page.read_text(encoding="utf-8")
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.M)
    slugs = {slugify(h.replace("`", ""), "-") for h in headings}
    return slugs | set(re.findall(r'\bid="([^"]+)"', text))


def test_the_registry_has_printed_refutations():
    assert PRINTED_REFUTED, "no claim with reading printed and expect refuted"


@pytest.mark.parametrize("claim_id", PRINTED_REFUTED)
def test_every_refuted_printed_statement_has_an_erratum(claim_id):
    page = ERRATA / f"{claim_id.split('.', 1)[0]}.md"
    assert page.is_file(), f"{claim_id}: no errata page {page.relative_to(ROOT)}"
    assert f"`{claim_id}`" in page.read_text(encoding="utf-8"), (
        f"{claim_id} is not named on {page.relative_to(ROOT)}"
    )


def test_the_errata_pages_exist():
    names = {page.name for page in PAGES}
    assert "index.md" in names
    assert names - {"index.md"} <= {f"{topic}.md" for topic in TOPICS}, names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_claim_id_on_an_errata_page_exists(page):
    named = set(CLAIM_ID.findall(page.read_text(encoding="utf-8")))
    assert named, f"{page.name} names no claim"
    assert not named - IDS, f"{page.name} names unknown claims: {sorted(named - IDS)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_section_link_lands(page):
    for target, anchor in LINK.findall(page.read_text(encoding="utf-8")):
        linked = (page.parent / target).resolve() if target else page
        assert linked.is_file(), f"{page.name}: missing page {target}"
        assert anchor in _anchors(linked), f"{page.name}: no section #{anchor} in {target}"


@pytest.mark.parametrize("topic", [p.stem for p in PAGES if p.stem != "index"])
def test_every_topic_page_is_in_the_index(topic):
    index = (ERRATA / "index.md").read_text(encoding="utf-8")
    assert f"({topic}.md#" in index, f"docs/errata/index.md does not link {topic}.md"
