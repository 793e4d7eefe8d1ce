"""The dashboard in a real headless Chromium, driven through WebDriver (Selenium), against the
real `lore` binary on a seeded data directory.

    browser_e2e.py BIN_DIR SCREENSHOT_DIR

BIN_DIR holds `lore` and `lore-ui-seed`; CHROMIUM and CHROMEDRIVER name the browser and its
driver (scripts/setup-browser prints them). Checks, each on what a person sees: the overview
shows the seeded numbers; a card is created, edited (an edit that conflicts with a change made
meanwhile is refused and both versions are shown), tried (what fires, a one-click keyword) and
archived; a knowledge entry is forgotten and its history shows it; a session's chart renders
and its turns show their layer and cost; the daily budget is set from the costs page;
the pages fit a phone in portrait; no page breaks the Content-Security-Policy. Screenshots of
the main pages go to SCREENSHOT_DIR. Ends with `N passed, N failed`.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

BIN_DIR, SHOTS = sys.argv[1], sys.argv[2]
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def start_gateway(data_dir):
    log = open(os.path.join(data_dir, "browser-test-gateway.log"), "wb")
    env = dict(os.environ, LORE_EMBEDDINGS="off", LORE_MEMORY="off", LORE_LOG="info",
               LORE_CARDS_VAULT=os.path.join(data_dir, "cards"))
    env.pop("LORE_DATA_DIR", None)
    process = subprocess.Popen(
        [os.path.join(BIN_DIR, "lore"), "start", "--port", "0", "--data-dir", data_dir],
        env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            port = int(open(os.path.join(data_dir, "gateway.port")).read().strip())
            base = f"http://127.0.0.1:{port}"
            with urllib.request.urlopen(base + "/health", timeout=2):
                return process, base
        except (OSError, ValueError):
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the gateway did not start")


def api(base, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method, headers={
        "x-lore-request": "1", "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def wait_for(what, check, timeout=10.0):
    deadline = time.time() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Run:
    def __init__(self, driver, base):
        self.driver, self.base = driver, base
        self.passed, self.failed = 0, 0

    def check(self, name, test):
        try:
            test()
            self.passed += 1
            print(f"ok   {name}")
        except Exception:  # noqa: BLE001 - every failure is reported, then the run goes on
            self.failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()

    def open(self, path):
        self.driver.get(self.base + path)
        WebDriverWait(self.driver, 10).until(lambda d: d.execute_script("return document.readyState") == "complete")

    def shot(self, name):
        os.makedirs(SHOTS, exist_ok=True)
        self.driver.save_screenshot(os.path.join(SHOTS, name))

    def text(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css).text

    def csp_violations(self):
        return [e["message"] for e in self.driver.get_log("browser")
                if "Content Security Policy" in e.get("message", "")]


def main():
    data_dir = tempfile.mkdtemp(prefix="lore-browser-")
    seeded = subprocess.run([os.path.join(BIN_DIR, "lore-ui-seed"), data_dir, "--vault",
                             os.path.join(data_dir, "cards")], check=True, capture_output=True, text=True)
    print(seeded.stdout.strip())
    process, base = start_gateway(data_dir)
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + os.path.join(data_dir, "chromium-profile"))
    options.add_argument("--window-size=1280,1000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    run = Run(driver, base)
    try:
        session = api(base, "GET", "/api/v1/sessions")["sessions"]
        first_session = sorted(s["id"] for s in session)[0]
        knowledge = api(base, "GET", "/api/v1/knowledge/browse")["entries"]
        entry = next(e for e in knowledge if e["title"] == "Retry backoff rule number 0")
        wait_for("the seeded cards to load", lambda: api(base, "GET", "/api/v1/stats")["cards"] == 2)

        def overview():
            run.open("/ui")
            assert run.text("#stat-sessions") == "6", run.text("#stat-sessions")
            assert run.text("#stat-messages") == "73"
            assert run.text("#stat-knowledge") == "8"
            assert run.text("#stat-cards") == "2"
            run.shot("overview.png")
        run.check("the overview shows the seeded numbers", overview)

        def create_card():
            run.open("/ui/cards/new?kind=people")
            driver.find_element(By.ID, "cf-key").send_keys("Dana")
            driver.find_element(By.ID, "cf-title").send_keys("Dana")
            driver.find_element(By.ID, "cf-keywords").send_keys("Dana, release manager")
            driver.find_element(By.CSS_SELECTOR, 'textarea[data-field="who"]').send_keys("Dana runs the releases.")
            driver.find_element(By.CSS_SELECTOR, 'textarea[data-field="correspondence"]').send_keys("Owes Dana a reply.")
            driver.find_element(By.ID, "card-save").click()
            WebDriverWait(driver, 10).until(ec.url_contains("/ui/cards/people/Dana?saved=1"))
            assert driver.find_element(By.ID, "saved").is_displayed()
            detail = api(base, "GET", "/api/v1/cards/people/Dana")
            assert "Dana runs the releases." in detail["text"], detail["text"]
        run.check("a card is created", create_card)

        def conflicting_edit():
            run.open("/ui/cards/people/Dana")
            stance = driver.find_element(By.CSS_SELECTOR, 'textarea[data-field="stance"]')
            stance.send_keys("Edited in the browser.")
            # Meanwhile another writer changes the card.
            time.sleep(0.05)
            current = api(base, "GET", "/api/v1/cards/people/Dana")
            api(base, "PUT", "/api/v1/cards/people/Dana", {"mtime": current["mtime"], "fields": {"recent": "Changed by another writer."}})
            driver.find_element(By.ID, "card-save").click()
            panel = WebDriverWait(driver, 10).until(ec.visibility_of_element_located((By.ID, "conflict")))
            assert "Changed by another writer." in run.text("#conflict-theirs"), run.text("#conflict-theirs")
            assert "Edited in the browser." in run.text("#conflict-yours")
            assert panel.is_displayed()
            run.shot("card-conflict.png")
            driver.find_element(By.ID, "conflict-load").click()
            WebDriverWait(driver, 10).until(lambda d: "Changed by another writer." in
                                            d.find_element(By.CSS_SELECTOR, 'textarea[data-field="recent"]').get_attribute("value"))
            stance = driver.find_element(By.CSS_SELECTOR, 'textarea[data-field="stance"]')
            stance.send_keys("Careful with Friday deploys.")
            driver.find_element(By.ID, "card-save").click()
            WebDriverWait(driver, 10).until(ec.url_contains("saved=1"))
            text = api(base, "GET", "/api/v1/cards/people/Dana")["text"]
            assert "Careful with Friday deploys." in text and "Changed by another writer." in text, text
        run.check("an edit that conflicts is refused, then made on the new version", conflicting_edit)

        def try_card():
            run.open("/ui/cards/people/Dana")
            driver.find_element(By.ID, "try-text").send_keys("Did Dana ship the release with Marguerite?")
            driver.find_element(By.CSS_SELECTOR, "#try-form button[type=submit]").click()
            fired = WebDriverWait(driver, 10).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#try-result .fired")))
            assert "Dana [people]" in fired.text and "hit: Dana" in fired.text, fired.text
            pill = next(p for p in driver.find_elements(By.CSS_SELECTOR, "#try-result .pill") if "Marguerite" in p.text)
            pill.click()
            keywords = driver.find_element(By.ID, "cf-keywords").get_attribute("value")
            assert "Marguerite" in keywords, keywords
            run.shot("cards.png")
            driver.find_element(By.ID, "card-save").click()
            WebDriverWait(driver, 10).until(ec.url_contains("saved=1"))
            assert "Marguerite" in api(base, "GET", "/api/v1/cards/people/Dana")["keywords"]
        run.check("a sentence is tried and an unused name becomes a keyword", try_card)

        def archive_card():
            run.open("/ui/cards/people/Dana")
            driver.find_element(By.ID, "card-archive").click()
            driver.switch_to.alert.accept()
            WebDriverWait(driver, 10).until(ec.url_contains("archived=1"))
            assert "Dana" in run.text("#card-list")
            listed = api(base, "GET", "/api/v1/cards")["cards"]
            assert all(c["key"] != "Dana" for c in listed)
        run.check("a card is deleted into the archive", archive_card)

        def forget_knowledge():
            run.open(f"/ui/knowledge/{entry['id']}")
            run.shot("knowledge.png")
            driver.find_element(By.ID, "knowledge-forget").click()
            driver.switch_to.alert.accept()
            WebDriverWait(driver, 10).until(ec.presence_of_element_located((By.ID, "entry-forgotten")))
            history = run.text("#history")
            assert "forgotten" in history and "version 3" in history, history
            assert "never wait more than 8 s" in history, "the edit of version 2 is shown as a diff"
        run.check("a knowledge entry is forgotten and its history shown", forget_knowledge)

        def session_chart():
            run.open(f"/ui/sessions/{first_session}")
            chart = driver.find_element(By.CSS_SELECTOR, "#turn-chart svg.chart")
            assert chart.size["height"] > 100 and chart.size["width"] > 300, chart.size
            bars = driver.find_elements(By.CSS_SELECTOR, "#turn-chart svg.chart rect")
            assert len(bars) >= 12, len(bars)
            filled = driver.execute_script(
                "return getComputedStyle(document.querySelector('#turn-chart rect.s2')).fill")
            assert filled and filled != "none", filled
            run.shot("session.png")
        run.check("a session's chart renders", session_chart)

        def set_budget():
            run.open("/ui/costs")
            assert run.text("#budget-amount").startswith("No budget"), run.text("#budget-amount")
            field = driver.find_element(By.ID, "budget-usd")
            field.clear()
            field.send_keys("12.5")
            driver.find_element(By.ID, "budget-save").click()
            # The form reloads the page once the gateway stored the budget: an element found
            # before the reload goes stale, so the wait looks again.
            WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException,
                                                          NoSuchElementException)).until(
                lambda d: d.find_element(By.ID, "budget-amount").text == "$12.50")
            assert "set here (stored)" in run.text("#budget-status"), run.text("#budget-status")
            budget = api(base, "GET", "/api/v1/costs")["budget"]
            assert budget["daily_usd"] == 12.5 and budget["source"] == "api", budget
            assert driver.find_element(By.ID, "budget-usd").get_attribute("value") == "12.5"
            run.shot("costs.png")
        run.check("the budget is set from the costs page", set_budget)

        def session_turns():
            run.open(f"/ui/sessions/{first_session}")
            rows = driver.find_elements(By.CSS_SELECTOR, "#turns-table tbody tr")
            assert len(rows) >= 6, len(rows)
            assert driver.find_elements(By.CSS_SELECTOR, "#cost-chart svg.chart rect")
            assert run.text("#context-state"), "the context state panel"
        run.check("a session's turns show their layer and cost", session_turns)

        def other_pages():
            for path, name in [("/ui/search?q=invoice+backoff&mode=bm25", "search.png"),
                               (f"/ui/entities/{api(base, 'GET', '/api/v1/entities')['entities'][1]['id']}", "entity.png"),
                               ("/ui/costs", None), ("/ui/settings", "settings.png")]:
                run.open(path)
                assert driver.find_element(By.TAG_NAME, "h1").text
                if name:
                    run.shot(name)
        run.check("search, an entity, costs and settings render", other_pages)

        def phone():
            driver.set_window_size(390, 844)
            for path in ["/ui", f"/ui/sessions/{first_session}", "/ui/cards/people/Priya", "/ui/knowledge"]:
                run.open(path)
                wide = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
                assert wide <= 1, f"{path} is {wide}px wider than a phone"
            run.open("/ui")
            run.shot("overview-phone.png")
            run.open("/ui/cards/people/Priya")
            run.shot("cards-phone.png")
            driver.set_window_size(1280, 1000)
        run.check("the pages fit a phone in portrait", phone)

        run.check("no page broke the Content-Security-Policy",
                  lambda: (lambda v: (_ for _ in ()).throw(AssertionError(v)) if v else None)(run.csp_violations()))
    finally:
        driver.quit()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    print(f"{run.passed} passed, {run.failed} failed")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
