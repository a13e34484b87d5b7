// Copy buttons for credentials. Without this script the values are still plain, selectable text.
// Served from Stride itself, so the CSP's script-src 'self' allows it; no inline handlers.
(function () {
  'use strict';

  function selectText(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function announce(button, message) {
    var section = button.closest('section') || document;
    var status = section.querySelector('.copy-status');
    if (status) status.textContent = message;
  }

  function copy(button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target) return;
    var value = target.textContent.trim();
    var label = button.getAttribute('aria-label').replace(/^Copy /, '');
    var done = function () {
      button.textContent = 'Copied';
      announce(button, 'The ' + label + ' is copied to the clipboard.');
      window.setTimeout(function () { button.textContent = 'Copy'; }, 2000);
    };
    var fallback = function () {
      // Older browsers, or a page not in a secure context: copy the selection instead.
      selectText(target);
      var ok = false;
      try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
      if (ok) done();
      else announce(button, 'Select the ' + label + ' and copy it with your keyboard.');
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(value).then(done, fallback);
    } else {
      fallback();
    }
  }

  document.addEventListener('DOMContentLoaded', function () {
    var buttons = document.querySelectorAll('button[data-copy]');
    for (var i = 0; i < buttons.length; i++) {
      var button = buttons[i];
      button.hidden = false;
      button.addEventListener('click', function (event) { copy(event.currentTarget); });
    }
  });
})();
