// What a phone and a keyboard-only visitor need of a page, checked in Chromium: no sideways scrolling, tap targets of
// at least 44×44 CSS pixels, every control reached by Tab and by Shift+Tab with a visible focus that nothing covers,
// and a finger's stroke (DevTools touch events, so the page sees pointers of type "touch"). The in-page half is a
// plain script string, so the test runner's transform never reaches code that runs in the browser.
import path from 'node:path';
import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { openInTab } from './browser.js';

/** The smallest tap target, in CSS pixels (WCAG 2.5.5). */
export const MIN_TARGET = 44;

const INSPECT = String.raw`(() => {
  if (window.__signetInspect) return;
  const CONTROLS = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex]:not([tabindex="-1"]), [role="button"]';
  const key = (el) => {
    if (el.id) return '#' + el.id;
    const parts = [];
    for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
      if (e.id) { parts.unshift('#' + e.id); break; }
      const same = e.parentElement ? [...e.parentElement.children].filter((c) => c.tagName === e.tagName) : [e];
      parts.unshift(e.tagName.toLowerCase() + (same.length > 1 ? ':nth-of-type(' + (same.indexOf(e) + 1) + ')' : ''));
    }
    return parts.join(' > ');
  };
  const name = (el) => (el.getAttribute('aria-label') || el.textContent || el.getAttribute('placeholder') || '').trim().replace(/\s+/g, ' ').slice(0, 40);
  const desc = (el) => key(el) + (name(el) ? ' "' + name(el) + '"' : '');
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && el.checkVisibility({ visibilityProperty: true }) && r.bottom + scrollY > 0;
  };
  const focusStyle = (el) => {
    const cs = getComputedStyle(el);
    return (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2) || cs.boxShadow !== 'none';
  };
  window.__signetInspect = {
    controls: (exempt) => [...document.querySelectorAll(CONTROLS)]
      .filter((el) => shown(el) && !el.disabled && !(exempt && el.closest(exempt)))
      .map((el) => ({ key: key(el), desc: desc(el), rect: el.getBoundingClientRect().toJSON() })),
    scroll: () => {
      const se = document.scrollingElement;
      const wide = [...document.body.querySelectorAll('*')]
        .filter((el) => { const r = el.getBoundingClientRect(); return shown(el) && (r.right > innerWidth + 0.5 || r.left < -0.5); })
        .slice(0, 5).map(desc);
      return { scrollWidth: se.scrollWidth, innerWidth, wide };
    },
    spill: (sel) => [...document.querySelectorAll(sel)].filter(shown).flatMap((el) => {
      const p = el.parentElement;
      const cs = getComputedStyle(p);
      // Either side, so a right-to-left page is held to the same rule.
      const pr = p.getBoundingClientRect();
      const r = el.getBoundingClientRect();
      const right = pr.right - parseFloat(cs.borderRightWidth) - parseFloat(cs.paddingRight);
      const left = pr.left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft);
      const over = Math.max(r.right - right, left - r.left);
      return over > 0.5 ? [desc(el) + ' sticks out of its container by ' + Math.round(over) + ' px'] : [];
    }),
    marked: (mark) => {
      const el = document.querySelector('[data-key-probe="' + mark + '"]');
      if (!el) return null;
      el.removeAttribute('data-key-probe');
      return key(el);
    },
    focused: () => {
      const el = document.activeElement;
      if (!document.hasFocus() || !el || el === document.body || el.tagName === 'IFRAME') return null;
      const r = el.getBoundingClientRect();
      const inView = r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
      let coveredBy = null;
      if (inView && window === window.top) {
        const x = Math.min(Math.max(r.left + r.width / 2, 1), innerWidth - 1);
        const y = Math.min(Math.max(r.top + r.height / 2, 1), innerHeight - 1);
        const hit = document.elementFromPoint(x, y);
        if (hit && hit !== el && !el.contains(hit) && !(el.labels && [...el.labels].includes(hit))) coveredBy = desc(hit);
      }
      return { key: key(el), desc: desc(el), visibleFocus: focusStyle(el), inView: window !== window.top || inView, coveredBy };
    },
  };
})()`;

async function inspect<T>(frame: Page | Frame, call: string): Promise<T> {
  await frame.evaluate(INSPECT);
  return (await frame.evaluate(`window.__signetInspect.${call}`)) as T;
}

/**
 * Sideways scrolling (past `maxWidth`, else the frame's own width) and visible controls smaller than 44×44.
 * `exempt`: a selector whose controls may be smaller (the fields laid over the PDF, at the document's own scale).
 * `contained`: a selector of elements that must fit inside their parent's content box (tables, the PDF's pages).
 */
export async function layoutProblems(
  frame: Page | Frame,
  label: string,
  o: { exempt?: string; maxWidth?: number; contained?: string } = {},
): Promise<string[]> {
  const problems: string[] = [];
  if (o.contained)
    for (const p of await inspect<string[]>(frame, `spill(${JSON.stringify(o.contained)})`))
      problems.push(`${label}: ${p}`);
  const s = await inspect<{ scrollWidth: number; innerWidth: number; wide: string[] }>(frame, 'scroll()');
  const max = o.maxWidth ?? s.innerWidth;
  if (s.scrollWidth > max)
    problems.push(`${label}: scrolls sideways (${s.scrollWidth} > ${max}); too wide: ${s.wide.join(', ')}`);
  const controls = await inspect<Array<{ desc: string; rect: DOMRect }>>(
    frame,
    `controls(${JSON.stringify(o.exempt ?? null)})`,
  );
  for (const c of controls)
    if (c.rect.width < MIN_TARGET - 0.5 || c.rect.height < MIN_TARGET - 0.5)
      problems.push(`${label}: tap target ${c.desc} is ${Math.round(c.rect.width)}×${Math.round(c.rect.height)}`);
  return problems;
}

/** The visible, enabled controls of a frame (keys as `focusedIn` names them), which the keyboard must reach. */
export const controlsOf = async (frame: Page | Frame, exempt?: string): Promise<string[]> =>
  (await inspect<Array<{ key: string }>>(frame, `controls(${JSON.stringify(exempt ?? null)})`)).map((c) => c.key);

/** The name `focusedIn` gives `target`'s element, wherever its frame is: so a test can follow the focus to it. */
export async function keyOf(page: Page, target: Locator): Promise<string> {
  const mark = Math.random().toString(36).slice(2);
  await target.evaluate((el, m) => el.setAttribute('data-key-probe', m), mark);
  for (const frame of page.frames()) {
    const key = await inspect<string | null>(frame, `marked(${JSON.stringify(mark)})`).catch(() => null);
    if (key) return key;
  }
  throw new Error('keyOf: the element was not found in any frame');
}

export type Stop = { key: string; desc: string; visibleFocus: boolean; inView: boolean; coveredBy: string | null };

/** The element that has the keyboard focus, looked for in every frame of the page; null on the document itself. */
export async function focusedIn(page: Page): Promise<Stop | null> {
  for (const frame of page.frames()) {
    const stop = await inspect<Stop | null>(frame, 'focused()').catch(() => null);
    if (stop) return stop;
  }
  return null;
}

/**
 * Presses `key` (Tab or Shift+Tab) until the focus comes back round, and returns where it stopped, in order. The
 * walk starts from wherever the focus is; a stop on the document itself (between cycles) ends it.
 */
export async function walk(page: Page, key: 'Tab' | 'Shift+Tab', max = 60): Promise<Stop[]> {
  const stops: Stop[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    const stop = await focusedIn(page);
    if (!stop) {
      if (stops.length > 0) break;
      continue;
    }
    if (stops.length > 0 && stop.key === stops[0]!.key) break;
    stops.push(stop);
  }
  return stops;
}

/** What is wrong with the focus at each stop: no visible indicator, off screen, or covered by something else. */
export const focusProblems = (label: string, stops: Stop[]): string[] =>
  stops.flatMap((s) => [
    ...(s.visibleFocus ? [] : [`${label}: no visible focus on ${s.desc}`]),
    ...(s.inView ? [] : [`${label}: focused ${s.desc} is off screen`]),
    ...(s.coveredBy ? [`${label}: focused ${s.desc} is covered by ${s.coveredBy}`] : []),
  ]);

/** Tabs forward until `key`'s element has the focus (at most `max` presses); throws naming where the focus went. */
export async function tabTo(page: Page, key: string, back = false, max = 60): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const stop = await focusedIn(page);
    if (stop?.key === key) return;
    seen.push(stop?.key ?? '(document)');
  }
  throw new Error(`${key} not reached by ${back ? 'Shift+Tab' : 'Tab'}; stops: ${seen.join(', ')}`);
}

/** Waits until `key`'s element has the focus (a page may move it a task later, as a `toggle` handler does). */
export async function waitForFocus(page: Page, key: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let at: string | undefined;
  while (Date.now() < deadline) {
    at = (await focusedIn(page))?.key;
    if (at === key) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the focus did not reach ${key} in ${timeoutMs} ms; it is on ${at ?? '(document)'}`);
}

/** A finger's stroke across `target` (a zig-zag over its middle), as DevTools touch events on the page's viewport. */
export async function touchStroke(page: Page, target: Locator): Promise<void> {
  await target.scrollIntoViewIfNeeded();
  const box = await target.boundingBox();
  if (!box) throw new Error('touchStroke: the target has no box');
  const cdp = await page.context().newCDPSession(page);
  const at = (fx: number, fy: number) => [{ x: box.x + box.width * fx, y: box.y + box.height * fy }];
  try {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(0.15, 0.6) });
    for (let i = 1; i <= 24; i++)
      await cdp.send('Input.dispatchTouchEvent', {
        type: 'touchMove',
        touchPoints: at(0.15 + (0.7 * i) / 24, i % 4 < 2 ? 0.35 : 0.65),
      });
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  } finally {
    await cdp.detach();
  }
}

/** Size and count of non-transparent pixels of a base64 PNG, decoded by the browser. */
export const pngInk = (frame: Page | Frame, base64: string): Promise<{ width: number; height: number; ink: number }> =>
  frame.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const ctx = c.getContext('2d')!;
    ctx.drawImage(img, 0, 0);
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    let ink = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) ink++;
    return { width: c.width, height: c.height, ink };
  }, base64);

/**
 * Taps `target` until `sent` settles: on a loaded machine the browser can read a tap whose touch-end comes late as a
 * long press, which makes no click. Only for a control whose click sends something once (the page guards repeats).
 */
export async function tapUntil<T>(target: Locator, sent: Promise<T>, tries = 3): Promise<T> {
  const settled = sent.then(
    () => true,
    () => true,
  );
  for (let i = 0; i < tries; i++) {
    await target.tap();
    const done = await Promise.race([settled, new Promise<false>((r) => setTimeout(() => r(false), 5000).unref())]);
    if (done || !(await target.isEnabled().catch(() => false))) break;
  }
  return sent;
}

/**
 * Opens `url` in the context's one tab (openInTab) and waits until the PDF viewer drew page 1; page errors and
 * console errors go to `problems`.
 */
export async function openViewerPage(context: BrowserContext, url: string, problems: string[]): Promise<Page> {
  const { page } = await openInTab(context, url, problems, (tab, sink) => {
    tab.on('pageerror', (err) => sink.push(`pageerror: ${err.message}`));
    tab.on('console', (m) => {
      if (m.type() === 'error') sink.push(`console: ${m.text()}`);
    });
  });
  await page.locator('[data-page="1"].rendered').waitFor({ timeout: 15_000 });
  await page.locator('#viewer[data-pages]').waitFor({ timeout: 15_000 });
  return page;
}

/** A screenshot taker into `dir`: the viewport as `<name>.png` and the whole page as `<name>-full.png`. */
export const screenshotsIn =
  (dir: string) =>
  async (page: Page, name: string, t: { diagnostic(m: string): void }): Promise<void> => {
    const file = path.join(dir, `${name}.png`);
    await page.screenshot({ path: file });
    await page.screenshot({ path: path.join(dir, `${name}-full.png`), fullPage: true });
    t.diagnostic(`screenshot: ${file}`);
  };
