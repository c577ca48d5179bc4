#!/usr/bin/env python3
"""Drives /docs (Swagger UI) in headless Chromium, as an integrator would.

Loads /docs, clicks Authorize, enters the API key, opens GET /api/casos-de-uso, "Try it out",
"Execute", and checks the rendered response: HTTP 200, the envelope with "sucesso": true and the
expected use cases. Also fails if the page asks any host but the API (the UI must work on a
closed network) or logs a JavaScript error.

Uses the system's Chromium (Debian package `chromium`), never Playwright's own browsers.
Usage: docs_ui.py BASE_URL API_KEY EXPECTED_TEXT... ; prints DOCS_UI_OK on success, exit 0.
Env: CHROMIUM (default /usr/bin/chromium), DOCS_UI_ARTIFACTS (folder for a failure screenshot).
"""
import json
import os
import sys
import time
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright, expect

TIMEOUT_MS = 30_000


def main() -> int:
    base, key, expected = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3:]
    origin = urlparse(base).netloc
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    artifacts = os.environ.get("DOCS_UI_ARTIFACTS", ".")
    foreign, js_errors, steps = [], [], []
    started = time.monotonic()

    def step(name):
        steps.append(f"{time.monotonic() - started:6.2f}s {name}")
        print(steps[-1], flush=True)

    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-dev-shm-usage",
            ],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        page.on(
            "request",
            lambda r: foreign.append(r.url)
            if urlparse(r.url).scheme in ("http", "https") and urlparse(r.url).netloc != origin
            else None,
        )
        page.on("pageerror", lambda e: js_errors.append(str(e)))
        try:
            page.goto(f"{base}/docs", wait_until="domcontentloaded")
            step("loaded /docs")
            # The document was fetched and rendered: its title and the operation are on the page.
            expect(page.locator(".swagger-ui .info .title")).to_contain_text(
                "Consent Management Public API", timeout=TIMEOUT_MS
            )
            op = page.locator("#operations-CasosDeUso-listarCasosDeUso")
            expect(op).to_be_visible()
            step("document rendered")

            # Authorize with the key (the ApiKey scheme, header Api-Key).
            page.locator(".scheme-container button.authorize").click()
            modal = page.locator(".dialog-ux .modal-ux")
            expect(modal).to_be_visible()
            expect(modal).to_contain_text("Api-Key")
            modal.locator(".auth-container input").first.fill(key)
            modal.locator("button.authorize").click()
            expect(modal.locator("button", has_text="Logout")).to_be_visible()
            expect(modal).to_contain_text("Authorized")
            modal.locator("button", has_text="Close").click()
            expect(modal).to_be_hidden()
            step("authorized")

            # GET /api/casos-de-uso: open, Try it out, Execute.
            op.locator(".opblock-summary-control").click()
            op.locator("button.try-out__btn").click()
            step("try it out")
            key_field = op.locator('tr[data-param-name="Api-Key"] input')
            if key_field.count():
                expect(key_field).to_have_value(key)
                step("Api-Key field filled from Authorize")
            op.locator("button.execute").click()
            step("executed")

            live = op.locator(".live-responses-table")
            expect(live.locator("tr.response td.response-col_status").first).to_have_text("200", timeout=TIMEOUT_MS)
            body = live.locator("tr.response .response-col_description .highlight-code").first
            expect(body).to_contain_text('"sucesso": true')
            for text in expected:
                expect(body).to_contain_text(text)
            # The rendered body (a copy/download button's label may sit around it).
            text = body.inner_text()
            rendered = text[text.index("{") : text.rindex("}") + 1]
            envelope = json.loads(rendered)
            assert envelope["sucesso"] is True, rendered
            assert isinstance(envelope["data"], list) and envelope["data"], rendered
            curl = op.locator(".curl-command").inner_text()
            assert "Api-Key: " in curl, "the request carried no Api-Key header"
            step(f"response rendered: 200, sucesso true, {len(envelope['data'])} use cases")

            assert not foreign, f"requests to other hosts: {foreign}"
            assert not js_errors, f"JavaScript errors: {js_errors}"
        except Exception:
            shot = os.path.join(artifacts, "docs-ui-failure.png")
            try:
                page.screenshot(path=shot, full_page=True)
                print(f"screenshot: {shot}", file=sys.stderr)
            except Exception as e:  # the browser may be gone
                print(f"no screenshot: {e}", file=sys.stderr)
            print("steps done:\n" + "\n".join(steps), file=sys.stderr)
            print(f"foreign requests: {foreign}\nJS errors: {js_errors}", file=sys.stderr)
            raise
        finally:
            browser.close()
    print("DOCS_UI_OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
