"""Lighthouse performance of every page of the built site, beside the stock Jupyter Book's
notebook page, both served the same way: from this machine, gzip-compressed as GitHub Pages
serves them. A measurement for a maintainer, not a test.

    npm install --prefix /tmp/lighthouse lighthouse@13.5.0
    make test   # or any run of tests/test_site.py: it builds _build/html and the stock book
    .venv/bin/python tools/lighthouse.py /tmp/lighthouse/node_modules/.bin/lighthouse [runs] [profiles]

Prints one table per profile named (default: both), mobile (Lighthouse's default: slow 4G, a
4x slower CPU) and desktop: per page, the median over `runs` (default 3) of the performance
score, LCP, TBT, CLS and the bytes transferred. Both profiles simulate their network and CPU
from what the page did on this machine, so a busy machine lowers the scores: the load average
is printed.
"""
import functools
import gzip
import http.server
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
STOCK = ROOT / "_build" / "test-run" / "stock" / "_build" / "html"
COMPRESSED = {".html", ".css", ".js", ".svg", ".json", ".txt", ".xml", ".ico", ".map"}


class CompressingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves text gzip-compressed when the browser accepts it, as GitHub Pages does."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if path.suffix not in COMPRESSED or not accepts or not path.is_file():
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args):
        pass


def serve(directory):
    handler = functools.partial(CompressingHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/"


# Lighthouse's flags for each profile; mobile is its default.
PROFILES = {"mobile": [], "desktop": ["--preset=desktop"]}


def lighthouse(binary, url, profile):
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        subprocess.run(
            [
                binary, url, *PROFILES[profile], "--only-categories=performance", "--quiet",
                "--output=json", f"--output-path={report}",
                "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
            ],
            check=True,
            env={**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")},
        )
        result = json.loads(report.read_text())
    audits = result["audits"]
    return {
        "score": result["categories"]["performance"]["score"],
        "lcp": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "tbt": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "bytes": audits["total-byte-weight"]["numericValue"],
    }


def main(binary, runs=3, profiles=tuple(PROFILES)):
    pages = [("stock: notebooks", serve(STOCK) + "notebooks.html")]
    site = serve(SITE)
    pages += [(path.stem, site + str(path.relative_to(SITE))) for path in sorted((SITE / "book").glob("*.html"))]
    for profile in profiles:
        print(f"\n{profile}: load average {os.getloadavg()}; median of {runs} runs each")
        print(f"{'page':45} score   LCP s  TBT ms    CLS   kB transferred")
        for name, url in pages:
            results = [lighthouse(binary, url, profile) for _ in range(runs)]
            median = {key: statistics.median(result[key] for result in results) for key in results[0]}
            print(f"{name:45} {median['score']:.2f}  {median['lcp']:6.2f}  {median['tbt']:6.0f}  {median['cls']:5.3f}  {median['bytes'] / 1e3:8.1f}")
            sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) < 2 or any(profile not in PROFILES for profile in sys.argv[3:]):
        sys.exit(f"usage: {sys.argv[0]} LIGHTHOUSE [RUNS] [{' | '.join(PROFILES)} ...]")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3, sys.argv[3:] or tuple(PROFILES))
