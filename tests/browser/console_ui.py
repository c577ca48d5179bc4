#!/usr/bin/env python3
"""Walks /console (issue 26) in headless Chromium, as its users would, with the keyboard where it
matters: signs in with each key given (auditor, webhooks, consulta), walks the pages its scopes
allow, checks that the key is in no page nor in the browser's storage and that the session cookie
is HttpOnly and SameSite=Strict, signs out. A screenshot of each page is kept in
CONSOLE_UI_ARTIFACTS (the test's artifacts). Fails on any JavaScript error, CSP violation
(reported on the console) or request to another host.

Usage: console_ui.py BASE_URL AUDITOR_KEY WEBHOOKS_KEY CONSULTA_KEY CPF REQUEST_ID [INTEGRACAO_KEY]
prints CONSOLE_UI_OK on success, exit 0. With INTEGRACAO_KEY, the imports' page is walked too: a
JSON Lines file (a valid line of the test app's template `tpl-a-marketing`, and one whose CPF has
a wrong check digit) uploaded through the form's file field, then the import's page. Env: CHROMIUM (default /usr/bin/chromium).
Each page is also checked at 320 CSS px (no sideways scroll, "Sair" in the header on its dark
background, the current page marked, no API path in its text) and, when AXE_JS is given, by
axe-core (no violation at any impact): docs/console.md.
"""
import json
import os
import re
import sys
import tempfile
import zipfile
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright, expect

TIMEOUT_MS = 30_000


def main() -> int:
    base, auditor, webhooks, consulta, cpf, request_id = sys.argv[1:7]
    integracao = sys.argv[7] if len(sys.argv) > 7 else None
    base = base.rstrip("/")
    origin = urlparse(base).netloc
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    artifacts = os.path.join(os.environ.get("CONSOLE_UI_ARTIFACTS", "."), "console-ui")
    os.makedirs(artifacts, exist_ok=True)
    problems = []
    expect.set_options(timeout=TIMEOUT_MS)

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--disable-dev-shm-usage"],
        )

        def session(name, key):
            context = browser.new_context(viewport={"width": 1200, "height": 900})
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.on("pageerror", lambda e: problems.append(f"{name}: JS error {e}"))
            # "Failed to load resource": the expected 403 pages and the absent favicon; the
            # stylesheet's own answer is checked below. A CSP violation is another message.
            page.on("console", lambda m: problems.append(f"{name}: console {m.type}: {m.text}")
                    if m.type == "error" and not m.text.startswith("Failed to load resource")
                    else None)
            page.on("response", lambda r: problems.append(f"{name}: stylesheet {r.status}")
                    if r.url.endswith("/console/estilo.css") and r.status != 200 else None)
            page.on("request", lambda r: problems.append(f"{name}: foreign request {r.url}")
                    if urlparse(r.url).netloc not in ("", origin) else None)
            page.goto(f"{base}/console")
            expect(page.get_by_role("heading", name="Entrar")).to_be_visible()
            shot(page, "entrar")
            # keyboard: the skip link comes first, then the key's field
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.textContent") == "Pular para o conteúdo"
            page.get_by_label("Chave de API").fill(key)
            page.get_by_label("Chave de API").press("Enter")
            expect(page.get_by_role("heading", name="Início")).to_be_visible()
            assert key not in page.content(), "the key is in the page"
            storage = page.evaluate("JSON.stringify([localStorage, sessionStorage])")
            assert key not in storage, "the key is in the browser's storage"
            cookie = [c for c in context.cookies() if c["name"] == "console_sessao"][0]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict", cookie
            assert key not in cookie["value"]
            return context, page

        axe_js = os.environ.get("AXE_JS")
        checked = []

        narrow = []

        def shot(page, name):
            page.screenshot(path=os.path.join(artifacts, f"{name}.png"), full_page=True)
            # WCAG 2.2 reflow: at 320 CSS px nothing scrolls sideways but a table in its box
            size = page.viewport_size
            page.set_viewport_size({"width": 320, "height": 900})
            width = page.evaluate("document.documentElement.scrollWidth")
            page.screenshot(path=os.path.join(artifacts, f"{name}-320.png"), full_page=True)
            if width > 320:
                problems.append(f"{name}: {width} px wide at 320 px")
            if name not in ("entrar", "sem-permissao"):
                # "Sair" reachable in the header at 320 px, on its dark background
                sair = page.get_by_role("button", name="Sair")
                box = sair.bounding_box()
                if box is None or box["x"] + box["width"] > 320:
                    problems.append(f"{name}: Sair off the page at 320 px ({box})")
                background = sair.evaluate("b => getComputedStyle(b).backgroundColor")
                if background in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"):
                    problems.append(f"{name}: Sair on a white background ({background})")
                if page.locator("nav a[aria-current]").count() != 1:
                    problems.append(f"{name}: no current page marked in the navigation")
            # people read labels: no API path in the page's text
            if "/api/" in page.inner_text("body"):
                problems.append(f"{name}: an API path in the page's text")
            narrow.append(name)
            page.set_viewport_size(size)
            if axe_js:
                axe(page, name)

        def axe(page, name):
            # The pages' CSP allows no script: axe runs in a copy of the page opened in a
            # context that bypasses it (the pages themselves never run one).
            checker = browser.new_context(bypass_csp=True)
            checker.add_cookies(page.context.cookies())
            other = checker.new_page()
            other.goto(page.url)
            other.add_script_tag(path=axe_js)
            result = other.evaluate("axe.run(document, {resultTypes: ['violations']})")
            bad = [f"{v['id']} ({v['impact']}): {v['help']}" for v in result["violations"]]
            if bad:
                problems.append(f"axe on {name}: " + "; ".join(bad))
            checked.append(name)
            checker.close()

        def sign_out(page, name):
            page.get_by_role("button", name="Sair").click()
            expect(page.get_by_role("heading", name="Entrar")).to_be_visible()
            page.goto(f"{base}/console/webhooks")
            expect(page.get_by_role("heading", name="Entrar")).to_be_visible()
            print(f"{name}: signed out", flush=True)

        try:
            # the DPO
            context, page = session("auditor", auditor)
            shot(page, "inicio-auditor")
            page.get_by_role("link", name="Titulares").first.click()
            expect(page.get_by_role("heading", name="Solicitações de um titular")).to_be_visible()
            page.get_by_label("CPF do titular").fill(cpf)
            page.get_by_label("CPF do titular").press("Enter")
            # issue 38, part 2: the search answers 303 to the subject's page, a GET whose URL
            # carries an opaque token (never the CPF)
            expect(page.get_by_role("heading", name="Titular", exact=True)).to_be_visible()
            link = page.get_by_role("link", name=request_id)
            expect(link).to_be_visible()
            digits = "".join(c for c in cpf if c.isdigit())
            assert "/console/titulares/" in page.url, page.url
            assert "cpf" not in page.url.lower() and cpf not in page.url and digits not in page.url, page.url
            expect(page.get_by_role("heading", name="Linha do tempo")).to_be_visible()
            expect(page.get_by_role("heading", name="Quem leu os dados deste titular")).to_be_visible()
            shot(page, "titular")
            subject_url = page.url
            # the evidence bundle: one download, a ZIP with the README and the request's receipt
            with page.expect_download() as info:
                page.get_by_role("link", name=re.compile("Baixar o pacote de evidências")).click()
            download = info.value
            assert download.suggested_filename.startswith("pacote-evidencias-"), download.suggested_filename
            assert download.suggested_filename.endswith(".zip"), download.suggested_filename
            bundle = os.path.join(artifacts, "pacote.zip")
            download.save_as(bundle)
            with zipfile.ZipFile(bundle) as z:
                names = z.namelist()
            for name in ("LEIAME.md", "jwks.json", f"solicitacoes/{request_id}/provas.json"):
                assert name in names, names
            print(f"bundle: downloaded, {len(names)} files", flush=True)
            link.click()
            expect(page.get_by_role("heading", name="Histórico")).to_be_visible()
            page.get_by_text("Mostrar a prova de coleta").click()
            # the receipt, verified in the page from the JWKS and the latest checkpoint
            result = page.locator("#resultado-recibo")
            page.get_by_role("button", name="Verificar o recibo neste navegador").click()
            expect(result).to_have_attribute("data-resultado", "valido", timeout=15000)
            expect(result).to_contain_text("Recibo válido")
            shot(page, "solicitacao")
            # a receipt changed on its way (its signature's first character): refused
            def tampered(route):
                response = route.fetch()
                material = response.json()
                head, payload, sig = material["recibo"].split(".")
                sig = ("B" if sig[0] != "B" else "C") + sig[1:]
                material["recibo"] = ".".join([head, payload, sig])
                route.fulfill(response=response, json=material)
            page.route("**/verificacao", tampered)
            page.get_by_role("button", name="Verificar o recibo neste navegador").click()
            expect(result).to_have_attribute("data-resultado", "invalido", timeout=15000)
            expect(result).to_contain_text("assinatura do recibo")
            page.unroute("**/verificacao")
            print("receipt: verified in the browser; a tampered one refused", flush=True)
            # Back to the subject's page, and reload: a GET, no "Confirm Form Resubmission"
            page.go_back()
            expect(page.get_by_role("heading", name="Titular", exact=True)).to_be_visible()
            assert page.url == subject_url, page.url
            page.reload()
            expect(page.get_by_role("heading", name="Titular", exact=True)).to_be_visible()
            print("subject page: Back and reload show it again", flush=True)
            page.get_by_role("link", name="Acessos", exact=True).click()
            expect(page.get_by_role("heading", name="Registro de acessos")).to_be_visible()
            expect(page.get_by_role("link", name=request_id).first).to_be_visible()
            shot(page, "acessos")
            page.get_by_role("link", name="Exportar").click()
            expect(page.get_by_role("heading", name="Exportar solicitações")).to_be_visible()
            shot(page, "exportar")
            page.get_by_role("link", name="Painel").click()
            expect(page.get_by_role("heading", name="Por caso de uso")).to_be_visible()
            expect(page.get_by_role("img", name="Solicitações criadas por dia")).to_be_visible()
            shot(page, "painel")
            page.get_by_role("link", name="Webhooks").click()
            expect(page.get_by_role("heading", name="Webhooks")).to_be_visible()
            sign_out(page, "auditor")
            context.close()

            # the operator
            context, page = session("webhooks", webhooks)
            shot(page, "inicio-webhooks")
            page.get_by_role("link", name="Webhooks").first.click()
            expect(page.get_by_role("heading", name="Webhooks")).to_be_visible()
            shot(page, "webhooks")
            entregas = page.get_by_role("link", name="Saúde e entregas")
            if entregas.count():
                entregas.first.click()
                expect(page.get_by_role("heading", name="Saúde e entregas")).to_be_visible()
                shot(page, "entregas")
            # issue 38, part 5: the form that adds a URL
            page.goto(f"{base}/console/webhooks")
            page.get_by_role("link", name="Adicionar uma URL").click()
            expect(page.get_by_role("heading", name="Nova webhook URL")).to_be_visible()
            shot(page, "nova-url")
            page.get_by_role("link", name="PGCC").click()
            expect(page.get_by_role("heading", name="Saúde da PGCC")).to_be_visible()
            shot(page, "pgcc")
            page.goto(f"{base}/console/titulares")
            expect(page.get_by_role("heading", name="Sem permissão")).to_be_visible()
            page.goto(f"{base}/console")
            sign_out(page, "webhooks")
            context.close()

            # who imports (issue 37, part 4): the imports' page, a file uploaded through it
            if integracao:
                context, page = session("integracao", integracao)
                page.get_by_role("link", name="Importações", exact=True).click()
                expect(page.get_by_role("heading", name="Importações", exact=True)).to_be_visible()
                shot(page, "importacoes")
                digits = "".join(c for c in cpf if c.isdigit())
                wrong = digits[:-1] + str((int(digits[-1]) + 1) % 10)
                # outside the artifacts: the file holds a (test) CPF, and target/e2e-logs is
                # checked for personal data
                path = os.path.join(tempfile.mkdtemp(), "importacao.jsonl")
                with open(path, "w") as f:
                    for external_id, subject in (("walk-1", cpf), ("walk-2", wrong)):
                        f.write(json.dumps({
                            "idExterno": external_id, "origem": "navegador",
                            "casoDeUsoIdTemplate": "tpl-a-marketing", "cpfTitular": subject,
                            "modalidadeAcesso": "Direto", "tipoTitular": "PessoaFisica",
                            "dataExpiracaoConsentimento": "2099-12-31T23:59:59Z",
                            "dataTitularRespondeuConsentimento": "2020-01-01T00:00:00Z",
                            "provaColeta": "ficha assinada"}) + "\n")
                page.get_by_label("Arquivo (.csv ou .jsonl)").set_input_files(path)
                page.get_by_role("button", name="Enviar").click()
                expect(page.get_by_role("heading", name="Importação", exact=True)).to_be_visible()
                expect(page.get_by_role("cell", name="cpfTitular")).to_be_visible()
                content = page.content()
                for value in (cpf, digits, wrong):
                    assert value not in content, "a CPF in the import's page"
                    assert value not in page.url, page.url
                shot(page, "importacao")
                print("imports: a file uploaded through the page, its error by line and field", flush=True)
                sign_out(page, "integracao")
                context.close()

            # a consulta key: the home page only
            context, page = session("consulta", consulta)
            shot(page, "inicio-consulta")
            assert page.get_by_role("link", name="Webhooks").count() == 0
            page.goto(f"{base}/console/webhooks")
            expect(page.get_by_role("heading", name="Sem permissão")).to_be_visible()
            shot(page, "sem-permissao")
            context.close()

            assert not problems, "\n".join(problems)
        except Exception:
            print("problems: " + "\n".join(problems), file=sys.stderr)
            raise
        finally:
            browser.close()
    print(f"screenshots: {artifacts}", flush=True)
    print(f"reflow: no sideways scroll at 320 px on {', '.join(narrow)}", flush=True)
    if axe_js:
        print(f"axe-core: no violation at any impact on {', '.join(checked)}", flush=True)
    else:
        print("axe-core: SKIPPED (npm missing)", flush=True)
    print("CONSOLE_UI_OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
