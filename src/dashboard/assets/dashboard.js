// Progressive enhancement only: every page works without this file. Copy buttons copy their field's value and say
// so for a moment in the page's language (their own text and data-copied).
for (const button of document.querySelectorAll('[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  if (!field || !navigator.clipboard) continue;
  const label = button.textContent;
  button.hidden = false;
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(field.value);
    button.textContent = button.dataset.copied;
    setTimeout(() => (button.textContent = label), 2000);
  });
}
