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
// An accent colour's picker beside its text field (the field is what the form sends): shown only with this script,
// kept in step with the field both ways.
for (const pick of document.querySelectorAll('input[type="color"][data-for]')) {
  const text = document.getElementById(pick.dataset.for);
  if (!text) continue;
  const hex = /^#[0-9a-fA-F]{6}$/;
  pick.hidden = false;
  pick.addEventListener('input', () => (text.value = pick.value));
  text.addEventListener('input', () => {
    if (hex.test(text.value.trim())) pick.value = text.value.trim().toLowerCase();
  });
}
