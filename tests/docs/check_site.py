#!/usr/bin/env python3
"""Check the manual's built site (`mdbook build`, written to book/).

- every page of docs/ (but SUMMARY.md) was built, so none is left out of the table of contents;
- every relative link and anchor resolves: inside the site to a built file and an element id;
  out of the site (book/ sits beside docs/ at the same depth) to a file of the repository;
- the site loads nothing from the network: no script, stylesheet, image, frame or font
  from another host, in the pages or their stylesheets.

Usage: python3 tests/docs/check_site.py [REPO_ROOT]; exits 1 with a list of problems.
"""
import os
import re
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
BOOK = os.path.join(ROOT, "book")
DOCS = os.path.join(ROOT, "docs")

# Attributes whose URL the browser loads by itself (as opposed to a link a reader follows).
LOADED = {("script", "src"), ("img", "src"), ("iframe", "src"), ("source", "src"),
          ("video", "src"), ("audio", "src"), ("embed", "src"), ("object", "data")}


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []   # (tag, url) a reader follows
        self.loads = []   # (tag, url) the browser fetches

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "link" and attrs.get("href"):
            rel = (attrs.get("rel") or "").lower()
            (self.loads if ("stylesheet" in rel or "icon" in rel or "preload" in rel) else self.links).append((tag, attrs["href"]))
        elif tag == "a" and attrs.get("href"):
            self.links.append((tag, attrs["href"]))
        for (t, a) in LOADED:
            if tag == t and attrs.get(a):
                self.loads.append((tag, attrs[a]))


def is_remote(url):
    return bool(urlsplit(url).scheme) or url.startswith("//")


def main():
    problems = []
    if not os.path.isdir(BOOK):
        print(f"no built site at {BOOK}: run `mdbook build` first", file=sys.stderr)
        return 1
    pages = {}
    for folder, _, files in os.walk(BOOK):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".html"):
                page = Page()
                with open(path, encoding="utf-8") as f:
                    page.feed(f.read())
                pages[os.path.normpath(path)] = page
            elif name.endswith(".css"):
                with open(path, encoding="utf-8", errors="replace") as f:
                    for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", f.read()):
                        if is_remote(url) and not url.startswith("data:"):
                            problems.append(f"{os.path.relpath(path, BOOK)}: loads {url} from the network")
                    f.seek(0)
                    for url in re.findall(r"@import\s+['\"]([^'\"]+)", f.read()):
                        if is_remote(url):
                            problems.append(f"{os.path.relpath(path, BOOK)}: imports {url} from the network")

    for folder, _, files in os.walk(DOCS):
        for name in files:
            if name.endswith(".md") and name != "SUMMARY.md":
                rel = os.path.relpath(os.path.join(folder, name), DOCS)
                html = "index.html" if rel == "README.md" else rel[:-3] + ".html"
                if os.path.normpath(os.path.join(BOOK, html)) not in pages:
                    problems.append(f"docs/{rel}: not in the built site (missing from docs/SUMMARY.md?)")

    checked = 0
    for path, page in sorted(pages.items()):
        here = os.path.relpath(path, BOOK)
        for tag, url in page.loads:
            if url.startswith("data:"):
                continue
            if is_remote(url):
                problems.append(f"{here}: <{tag}> loads {url} from the network")
        for tag, url in page.links:
            if is_remote(url) or url.startswith(("mailto:", "javascript:")):
                continue
            checked += 1
            parts = urlsplit(url)
            target = path if not parts.path else os.path.normpath(os.path.join(os.path.dirname(path), unquote(parts.path)))
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            inside = target == BOOK or target.startswith(BOOK + os.sep)
            if inside:
                if not os.path.exists(target):
                    problems.append(f"{here}: {url} (no such file in the site)")
                    continue
                anchor = unquote(parts.fragment)
                if anchor and target.endswith(".html"):
                    ids = pages[os.path.normpath(target)].ids
                    if anchor not in ids:
                        problems.append(f"{here}: {url} (no element with id {anchor!r})")
            else:
                # A link out of the site, to a file of the repository the site was built
                # from (a configuration, a script). A Markdown page outside docs/ would be
                # rewritten to a missing .html: name such pages as code instead.
                if not os.path.exists(target):
                    problems.append(f"{here}: {url} (no such file in the repository)")

    if checked < 100:
        problems.append(f"only {checked} links checked: is the site built?")
    for p in problems:
        print(p)
    print(f"{len(pages)} pages, {checked} links checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
