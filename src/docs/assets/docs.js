// Starts Redoc (served from /assets, like this file) on the page's OpenAPI document. Nothing here reaches another
// host: fonts are the system's, and Redoc has no console that sends requests.
/* global document, MutationObserver, Redoc */
(function () {
  'use strict';
  const root = document.getElementById('redoc');
  const system = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  const mono = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';
  Redoc.init(
    root.dataset.specUrl,
    {
      expandResponses: '200,201,202',
      requiredPropsFirst: true,
      pathInMiddlePanel: true,
      jsonSampleExpandLevel: 4,
      showObjectSchemaExamples: true,
      theme: {
        typography: {
          fontFamily: system,
          headings: { fontFamily: system },
          code: { fontFamily: mono },
        },
      },
    },
    root,
  );

  // Redoc labels an operation's menu item with its summary alone, while the item also shows the method ("post"): a
  // voice user saying what they see would not match it (WCAG 2.5.3). Without the label, the name is what is shown.
  // On a narrow screen a markdown table (the error catalogue) scrolls sideways inside itself: a keyboard user must be
  // able to focus it to scroll it (WCAG 2.1.1).
  const tidy = () => {
    for (const item of root.querySelectorAll('[role="menuitem"][aria-label]')) {
      if (!item.getAttribute('aria-label').includes(item.textContent.trim())) item.removeAttribute('aria-label');
    }
    for (const table of root.querySelectorAll('.redoc-markdown table:not([tabindex])')) table.tabIndex = 0;
  };
  new MutationObserver(tidy).observe(root, { childList: true, subtree: true });
})();
