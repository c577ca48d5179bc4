#!/usr/bin/env python3
"""Signs in to /console through the company's OpenID Provider (issue 38, part 1) in headless
Chromium, once per role: the sign-in page's form (the company's CNPJ), the console's page with
the link to the provider (a link, so the console's CSP `form-action 'self'` is never asked to
allow another origin), the provider (tests/oidc/provider.mjs: no login form, its interaction URL
signs in the user named by `?login=`, which this script adds to it), back to the console's home page;
then the pages the role allows and one it does not, and sign-out, there and at the provider
(RP-initiated logout: the provider's confirmation, back to the sign-in page). Screenshots at 1280 and 320
CSS px in CONSOLE_UI_ARTIFACTS/console-ui (`oidc-<role>-*.png`), no sideways scroll at 320 px,
and axe-core (AXE_JS) with no violation at any impact. Fails on any JavaScript error or CSP
violation.

Usage: console_oidc_ui.py BASE_URL CNPJ DPO_SUB OPERADOR_SUB LEITURA_SUB
prints CONSOLE_OIDC_UI_OK on success. Env: CHROMIUM (default /usr/bin/chromium).
"""
import os
import re
import sys

from playwright.sync_api import sync_playwright, expect

TIMEOUT_MS = 30_000


def main() -> int:
    base, cnpj, dpo, operador, leitura = sys.argv[1:6]
    base = base.rstrip("/")
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    artifacts = os.path.join(os.environ.get("CONSOLE_UI_ARTIFACTS", "."), "console-ui")
    os.makedirs(artifacts, exist_ok=True)
    axe_js = os.environ.get("AXE_JS")
    problems, shots = [], []
    visited = []
    expect.set_options(timeout=TIMEOUT_MS)

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--disable-dev-shm-usage"],
        )

        def shot(page, name):
            page.screenshot(path=os.path.join(artifacts, f"{name}.png"), full_page=True)
            size = page.viewport_size
            page.set_viewport_size({"width": 320, "height": 900})
            width = page.evaluate("document.documentElement.scrollWidth")
            page.screenshot(path=os.path.join(artifacts, f"{name}-320.png"), full_page=True)
            if width > 320:
                problems.append(f"{name}: {width} px wide at 320 px")
            page.set_viewport_size(size)
            if axe_js:
                checker = browser.new_context(bypass_csp=True)
                checker.add_cookies(page.context.cookies())
                other = checker.new_page()
                other.goto(page.url)
                other.add_script_tag(path=axe_js)
                result = other.evaluate("axe.run(document, {resultTypes: ['violations']})")
                bad = [f"{v['id']} ({v['impact']}): {v['help']}" for v in result["violations"]]
                if bad:
                    problems.append(f"axe on {name}: " + "; ".join(bad))
                checker.close()
            shots.append(name)

        def sign_in(role, sub):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.on("pageerror", lambda e: problems.append(f"{role}: JS error {e}"))
            page.on("console", lambda m: problems.append(f"{role}: console {m.type}: {m.text}")
                    if m.type == "error" and not m.text.startswith("Failed to load resource")
                    else None)

            page.on("response", lambda r: visited.append(f"{r.status} {r.url[:120]}")
                    if r.request.is_navigation_request() else None)
            page.goto(f"{base}/console")
            page.get_by_label("CNPJ ou identificador da empresa").fill(cnpj)
            page.get_by_role("button", name="Entrar pelo provedor de identidade").click()
            expect(page.get_by_role("link", name="Continuar no provedor de identidade")).to_be_visible()
            shot(page, f"oidc-{role}-continuar")
            page.get_by_role("link", name="Continuar no provedor de identidade").click()
            # the test provider has no login form: its interaction URL signs in the user its
            # `login` parameter names (what a person typing a password would do)
            page.wait_for_url(re.compile(r".*/interaction/[^/?]+$"))
            page.goto(f"{page.url}?login={sub}")
            try:
                expect(page.get_by_role("heading", name="Início")).to_be_visible()
            except AssertionError:
                print(f"{role}: stopped at {page.url}: {page.inner_text('body')[:500]}", file=sys.stderr)
                raise
            assert page.url.rstrip("/").endswith("/console"), page.url
            shot(page, f"oidc-{role}-inicio")
            return context, page

        def sign_out(page):
            # the console's session ends and the page sends the browser on to the provider's
            # end_session_endpoint (RP-initiated logout: its `Refresh` header, a navigation the
            # CSP's form-action does not govern), which asks to confirm and sends it back to the
            # console's sign-in page
            page.get_by_role("button", name="Sair").click()
            page.wait_for_url(re.compile(r".*/session/end\?.*"))
            page.get_by_role("button", name="Yes, sign me out").click()
            expect(page.get_by_role("heading", name="Entrar")).to_be_visible()
            assert page.url.startswith(f"{base}/console?state="), page.url

        try:
            # the DPO: the auditor's pages
            context, page = sign_in("dpo", dpo)
            page.get_by_role("link", name="Acessos", exact=True).click()
            expect(page.get_by_role("heading", name="Registro de acessos")).to_be_visible()
            shot(page, "oidc-dpo-acessos")
            page.get_by_role("link", name="Titulares").first.click()
            expect(page.get_by_role("heading", name="Solicitações de um titular")).to_be_visible()
            sign_out(page)
            context.close()
            print("dpo: signed in through the provider, walked, signed out", flush=True)

            # the operator: the webhooks, not the subjects
            context, page = sign_in("operador", operador)
            assert page.get_by_role("link", name="Titulares").count() == 0
            page.get_by_role("link", name="Webhooks").first.click()
            expect(page.get_by_role("heading", name="Webhooks")).to_be_visible()
            shot(page, "oidc-operador-webhooks")
            page.goto(f"{base}/console/titulares")
            expect(page.get_by_role("heading", name="Sem permissão")).to_be_visible()
            page.goto(f"{base}/console")
            sign_out(page)
            context.close()
            print("operador: signed in through the provider, walked, signed out", flush=True)

            # leitura: the home page and the PGCC's health only
            context, page = sign_in("leitura", leitura)
            assert page.get_by_role("link", name="Webhooks").count() == 0
            assert page.get_by_role("link", name="Titulares").count() == 0
            page.get_by_role("link", name="PGCC").click()
            expect(page.get_by_role("heading", name="Saúde da PGCC")).to_be_visible()
            shot(page, "oidc-leitura-pgcc")
            page.goto(f"{base}/console/webhooks")
            expect(page.get_by_role("heading", name="Sem permissão")).to_be_visible()
            page.goto(f"{base}/console")
            sign_out(page)
            context.close()
            print("leitura: signed in through the provider, walked, signed out", flush=True)

            assert not problems, "\n".join(problems)
        except Exception:
            print("problems: " + "\n".join(problems), file=sys.stderr)
            print("navigations: " + "\n".join(visited), file=sys.stderr)
            raise
        finally:
            browser.close()
    print(f"screenshots (1280 and 320 px): {', '.join(shots)}", flush=True)
    if axe_js:
        print(f"axe-core: no violation at any impact on {', '.join(shots)}", flush=True)
    else:
        print("axe-core: SKIPPED (npm missing)", flush=True)
    print("CONSOLE_OIDC_UI_OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
