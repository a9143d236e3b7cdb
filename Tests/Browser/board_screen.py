"""What the board's tests on a 1920 x 1080 screen share (board_layout_test.py,
board_sign_in_test.py): headless Chromium at that size, the element-box checks, and the run of
one `healthgate demo` with the board beside it.
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from board_browser_test import Gateway, Failure, check, free_port, http_status, poll  # noqa: E402

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

WIDTH, HEIGHT = 1920, 1080


def overlaps(a, b):
    """Whether boxes [left, top, right, bottom] `a` and `b` overlap by more than half a pixel."""
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def inside(inner, outer):
    """Whether box `inner` lies within box `outer`, to half a pixel."""
    return inner[0] >= outer[0] - 0.5 and inner[1] >= outer[1] - 0.5 and inner[2] <= outer[2] + 0.5 and inner[3] <= outer[3] + 0.5


def screen_driver():
    """Debian's headless Chromium through chromium-driver, a 1920 x 1080 screen at scale 1."""
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={WIDTH},{HEIGHT}", "--force-device-scale-factor=1", "--hide-scrollbars"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    return driver


def run_on_screen(binary, prefix, demo_arguments, test):
    """Runs `healthgate demo DEMO_ARGUMENTS` (on a free port, quiet, its own store in a temporary
    directory named from `prefix`) and the 1920 x 1080 browser, waits until the board answers, then
    calls test(driver, gateway, base_url, results), which records its checks with check(). A
    Failure (a poll's deadline) is a failed check. Stops both, prints the count and returns the exit
    status: 0 when every check passed."""
    root = tempfile.mkdtemp(prefix=prefix)
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    results = []
    gateway = Gateway(binary, root, ["demo"] + demo_arguments + [
        "--listen", f"127.0.0.1:{port}", "--quiet", "--db", os.path.join(root, "samples.sqlite")])
    try:
        driver = screen_driver()
    except Exception:
        gateway.stop()
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        poll("the board to answer", 60, lambda: http_status(base + "api/board") == 200)
        test(driver, gateway, base, results)
    except Failure as failure:
        check(str(failure), False, results)
    finally:
        driver.quit()
        gateway.stop()
        shutil.rmtree(root, ignore_errors=True)
    failed = [name for name, passed in results if not passed]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0
