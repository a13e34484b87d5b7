// The consent page's "Who answers?": the scopes' words name whose data the app gets ("See Tess's
// profile") as the developer chooses a test person. Without this script they say "your", which
// is right for the first choice, the developer.
(function () {
  'use strict';

  function update() {
    var chosen = document.querySelector('input[name="consent_as"]:checked');
    if (!chosen) return;
    var words = document.querySelectorAll('.whose');
    for (var i = 0; i < words.length; i++) words[i].textContent = chosen.getAttribute('data-whose');
  }

  document.addEventListener('DOMContentLoaded', function () {
    var choices = document.querySelectorAll('input[name="consent_as"]');
    for (var i = 0; i < choices.length; i++) choices[i].addEventListener('change', update);
    update();
  });
})();
