"""jointmath.player's page in a real browser: headless Chromium driven by selenium (Debian's
chromium and chromium-driver; .ci/run installs them). The page loads without a console error,
draws, moves as time passes, seeks with its slider, orbits when dragged, and plays a 4,500-frame
clip at its rate. The clock is the page's own performance.now, replaced by one the test sets, so
that which frame shows at which time is checked exactly, not against the machine's speed."""
import base64
import dataclasses
import io
import shutil
from pathlib import Path

import numpy as np
import pytest

import jointmath as jm
from jointmath import bvh

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium: "
                                                            "the test extra has it)")
Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed (matplotlib, in the test extra, needs it)")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason=f"no {' and no '.join(n for n, p in (('chromium', CHROMIUM), ('chromedriver', DRIVER)) if not p)} on "
           f"this machine (apt-get install chromium chromium-driver)")

DATA = Path(__file__).resolve().parent / "data"
WAIT_SECONDS = 30  # the longest wait for the page to draw what it was asked to: a limit, not a measurement


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,700", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(DRIVER))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def clip():
    return bvh.load(jm.data.sample_clip_path())


def console_errors(driver):
    """The browser log's errors since the last call (reading the log empties it)."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def open_page(driver, page, tmp_path, name="page.html"):
    """Load a Player's page from a file, check the console, and put a clock the test sets in
    place of performance.now (at 0 ms)."""
    console_errors(driver)
    path = tmp_path / name
    page.save(path)
    driver.get(path.as_uri())
    canvas = driver.find_element("id", "jm-view")
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: canvas.get_attribute("data-step") is not None)
    driver.execute_script("window.testTime = 0; window.performance.now = function () { return window.testTime; };")
    assert console_errors(driver) == []
    return canvas


def skeleton_pixels(driver):
    """(H, W) bool: the canvas's coloured pixels (the bones and titles; the floor grid is grey)."""
    url = driver.execute_script("return document.getElementById('jm-view').toDataURL('image/png');")
    image = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGBA")).astype(int)
    rgb, alpha = image[..., :3], image[..., 3]
    return (alpha > 128) & (rgb.max(axis=-1) - rgb.min(axis=-1) > 60)


def show_time(driver, canvas, seconds, step):
    """Set the page's clock to `seconds` and wait until it has drawn the slider's `step`."""
    driver.execute_script("window.testTime = arguments[0];", seconds * 1000)
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: canvas.get_attribute("data-step") == str(step))


def seek(driver, step):
    """Move the slider as a user does (its value, then an input event)."""
    driver.execute_script("var s = document.getElementById('jm-slider'); s.value = arguments[0];"
                          "s.dispatchEvent(new Event('input', {bubbles: true}));", str(step))


def test_page_loads_without_errors_and_draws_the_skeleton(browser, clip, tmp_path):
    canvas = open_page(browser, clip.player(), tmp_path)
    pixels = skeleton_pixels(browser)
    assert pixels.sum() > 200, "the canvas is blank"
    assert canvas.get_attribute("data-frames") == "0"
    assert "frame 0" in browser.find_element("id", "jm-label").text
    assert browser.find_element("id", "jm-slider").get_attribute("max") == str(clip.n_frames - 1)
    assert console_errors(browser) == []


def test_the_skeleton_moves_as_time_passes(browser, clip, tmp_path):
    canvas = open_page(browser, clip.player(), tmp_path)
    first = skeleton_pixels(browser)
    browser.find_element("id", "jm-play").click()
    assert browser.find_element("id", "jm-play").text == "Pause"
    show_time(browser, canvas, 1.0, 120)  # 1 s at 120 fps
    assert canvas.get_attribute("data-frames") == "120"
    later = skeleton_pixels(browser)
    assert (first ^ later).sum() > 0.3 * first.sum(), "the skeleton did not move"
    browser.find_element("id", "jm-play").click()  # pause: the clock runs on, the frame stays
    browser.execute_script("window.testTime = 2000;")
    seek(browser, 120)
    assert canvas.get_attribute("data-step") == "120" and browser.find_element("id", "jm-play").text == "Play"
    assert console_errors(browser) == []


def test_real_time_playback_advances(browser, clip, tmp_path):
    """With the browser's own clock: Play, and the frame moves on."""
    canvas = open_page(browser, clip.player(), tmp_path)
    browser.execute_script("delete window.performance.now;")  # the browser's clock again
    browser.find_element("id", "jm-play").click()
    WebDriverWait(browser, WAIT_SECONDS).until(lambda d: int(canvas.get_attribute("data-step")) > 0)
    assert console_errors(browser) == []


def test_the_slider_seeks(browser, clip, tmp_path):
    canvas = open_page(browser, clip.player(), tmp_path)
    first = skeleton_pixels(browser)
    seek(browser, 300)
    assert canvas.get_attribute("data-frames") == "300"
    assert "frame 300" in browser.find_element("id", "jm-label").text
    sought = skeleton_pixels(browser)
    assert (first ^ sought).sum() > 0.3 * first.sum()
    # the same frame reached by playing draws the same pixels
    seek(browser, 0)
    browser.find_element("id", "jm-play").click()
    show_time(browser, canvas, 2.5, 300)
    browser.find_element("id", "jm-play").click()
    assert np.array_equal(skeleton_pixels(browser), sought)
    # the keyboard moves it too
    slider = browser.find_element("id", "jm-slider")
    slider.send_keys(Keys.END)
    WebDriverWait(browser, WAIT_SECONDS).until(lambda d: canvas.get_attribute("data-step") == str(clip.n_frames - 1))
    assert console_errors(browser) == []


def test_keys_play_and_step(browser, clip, tmp_path):
    canvas = open_page(browser, clip.player(), tmp_path)
    canvas.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_LEFT)
    assert canvas.get_attribute("data-frames") == "2"
    canvas.send_keys(Keys.SPACE)
    assert browser.find_element("id", "jm-play").text == "Pause"
    show_time(browser, canvas, 0.5, 62)  # from frame 2, half a second at 120 fps
    canvas.send_keys(Keys.SPACE)
    assert browser.find_element("id", "jm-play").text == "Play"
    assert console_errors(browser) == []


def test_dragging_orbits_the_view(browser, clip, tmp_path):
    canvas = open_page(browser, clip.player(), tmp_path)
    before = skeleton_pixels(browser)
    ActionChains(browser).move_to_element(canvas).click_and_hold().move_by_offset(120, 30).release().perform()
    after = skeleton_pixels(browser)
    assert canvas.get_attribute("data-frames") == "0"
    assert (before ^ after).sum() > 0.3 * before.sum(), "the view did not turn"
    assert console_errors(browser) == []


def test_a_4500_frame_clip_plays_at_its_rate(browser, tmp_path):
    long = bvh.load(DATA / "01_01.bvh")  # 2,752 frames at 120 fps: played twice over, 4,500 frames
    frames = np.concatenate([long.joints, long.joints])[:4500]
    clip = dataclasses.replace(long, joints=frames, name="4500 frames")
    canvas = open_page(browser, clip.player(), tmp_path)
    assert browser.find_element("id", "jm-slider").get_attribute("max") == "4499"
    browser.find_element("id", "jm-play").click()
    for seconds, frame in [(0.5, 60), (30.0, 3600), (37.49, 4498), (37.5 + 10.0, 1200)]:  # 37.5 s: it loops
        show_time(browser, canvas, seconds, frame)
        assert canvas.get_attribute("data-frames") == str(frame)
    assert skeleton_pixels(browser).sum() > 200
    assert console_errors(browser) == []


def test_two_clips_side_by_side_each_at_its_rate(browser, clip, tmp_path):
    slow = bvh.resample(clip, 30)
    canvas = open_page(browser, jm.player([clip, slow], titles=["120 fps", "30 fps"], width=400), tmp_path)
    pixels = skeleton_pixels(browser)
    assert pixels.shape[1] == 800
    assert pixels[:, :400].sum() > 200 and pixels[:, 400:].sum() > 200, "a panel is blank"
    browser.find_element("id", "jm-play").click()
    show_time(browser, canvas, 1.0, 120)
    assert canvas.get_attribute("data-frames") == "120,30"
    show_time(browser, canvas, 3.1, 372)
    assert canvas.get_attribute("data-frames") == f"372,{min(93, slow.n_frames - 1)}"
    assert console_errors(browser) == []


def test_overlay_draws_both_clips_in_one_panel(browser, clip, tmp_path):
    shifted = clip.joints.copy()
    shifted["t"][:, 0, 0] += 10  # the root moved sideways: a second figure beside the first
    other = dataclasses.replace(clip, joints=shifted)
    open_page(browser, jm.player([clip, other], layout="overlay"), tmp_path)
    url = browser.execute_script("return document.getElementById('jm-view').toDataURL('image/png');")
    image = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")).astype(int)
    assert image.shape[1] == 480
    blue = (abs(image - [0x1f, 0x77, 0xb4]).sum(axis=-1) < 40).sum()
    red = (abs(image - [0xd6, 0x27, 0x28]).sum(axis=-1) < 40).sum()
    assert blue > 100 and red > 100
    assert console_errors(browser) == []


def test_the_notebook_form_plays_inside_its_iframe(browser, clip, tmp_path):
    """_repr_html_ as a notebook puts it in a page of its own: the player runs inside its iframe."""
    console_errors(browser)
    notebook = tmp_path / "notebook.html"
    notebook.write_text(f"<!DOCTYPE html><html><body><p>output</p>{clip.player()._repr_html_()}</body></html>",
                        encoding="utf-8")
    browser.get(notebook.as_uri())
    browser.switch_to.frame(browser.find_element("tag name", "iframe"))
    try:
        canvas = browser.find_element("id", "jm-view")
        WebDriverWait(browser, WAIT_SECONDS).until(lambda d: canvas.get_attribute("data-step") == "0")
        browser.execute_script("window.testTime = 0; window.performance.now = function () { return window.testTime; };")
        browser.find_element("id", "jm-play").click()
        show_time(browser, canvas, 0.5, 60)
        assert skeleton_pixels(browser).sum() > 200
    finally:
        browser.switch_to.default_content()
    assert console_errors(browser) == []
