//! The HTML report's inline assets: its stylesheet, the key to its timelines and the script
//! behind its filters, expandable failures and URL presets.

pub(super) const STYLE: &str = r#"
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5rem;color:#1f2328;background:#fff}
h1{font-size:1.4rem;margin:0 0 .4rem} h2{font-size:1.15rem;margin-top:1.6rem} h3{font-size:1rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em}
.verdict-pass{color:#1a7f37}.verdict-fail,.verdict-input-error{color:#cf222e}.verdict-inconclusive{color:#9a6700}
.context{color:#59636e;font-size:.9rem}
#filters{display:flex;gap:1rem;margin:1rem 0;padding:.5rem;background:#f6f8fa;border-radius:6px}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #d1d9e0;padding:.25rem .5rem;text-align:left;vertical-align:top}
th.col{text-align:center;white-space:nowrap}
th.baseline,td.baseline{border-left:2px dashed #8c959f}
td.cell{text-align:center;white-space:nowrap}
.matrix-table td:first-child{white-space:nowrap}
.matrix-table th:first-child,.matrix-table td:first-child{position:sticky;left:0;background:#fff;z-index:1}
.matrix-table thead th{position:sticky;top:0;background:#fff;z-index:2}
.table-wrap{max-height:85vh;overflow:auto}
.cell-pass{background:#dafbe1;color:#116329}
.cell-fail{background:#ffebe9;color:#a40e26;font-weight:700}
.cell-skip{background:#f6f8fa;color:#59636e}
.cell-inconclusive{background:#fff8c5;color:#7d4e00}
.cell-waived{background:#ddf4ff;color:#0550ae}
.cell-fail a{color:inherit}
details.failure{border:1px solid #ffcecb;border-radius:6px;margin:.5rem 0;padding:.4rem .6rem}
details.failure summary{cursor:pointer}
dl{margin:.4rem 0 0}dt{font-weight:600;margin-top:.3rem}dd{margin-left:1rem}
.note{color:#59636e;font-style:italic}
svg.timeline{display:block;margin:.4rem 0 1rem;font-size:11px;font-family:ui-monospace,monospace;max-width:100%;height:auto}
svg .lane-bg{fill:#f6f8fa} svg .lane-baseline .lane-bg{fill:#fbfbfc}
svg .lane-side{font-weight:700;fill:#1f2328} svg .lane-baseline .lane-side{fill:#59636e}
svg .lane-label,svg .lane-kind{fill:#424a53}
svg .lane-line,svg .axis line{stroke:#8c959f;stroke-width:1} svg .axis text{fill:#59636e}
svg .step-start{stroke:#afb8c1;stroke-width:1;stroke-dasharray:2 3}
svg .step rect{stroke:#fff;stroke-width:1} svg .step-label{font-size:10px;fill:#1f2328}
svg .step-pass rect{fill:#aceebb} svg .step-fail rect{fill:#ff8182} svg .step-inconclusive rect{fill:#f5e0a0}
svg .step-skip rect,svg .step-waived rect{fill:#d1d9e0} svg .step-fail-end{stroke:#cf222e;stroke-width:2}
svg .event circle,svg .event polygon{stroke:#1f2328;stroke-width:1}
svg .ev-added circle{fill:#2da44e} svg .ev-modified circle{fill:#0969da} svg .ev-mixed circle{fill:#8250df}
svg .ev-deleted circle{fill:#cf222e} svg .ev-tool polygon{fill:#bf8700} svg .ev-other circle{fill:#8c959f}
.legend{font-size:.85rem;color:#59636e} .legend span{display:inline-block;margin-right:1rem}
.legend i{display:inline-block;width:.7rem;height:.7rem;margin-right:.3rem;vertical-align:-.05rem;border:1px solid #1f2328;border-radius:50%}
.legend i.tool{border-radius:0;transform:rotate(45deg);background:#bf8700}
.legend i.step{border-radius:2px;border:0;width:1.4rem;background:#aceebb}
.legend i.added{background:#2da44e}.legend i.modified{background:#0969da}.legend i.deleted{background:#cf222e}.legend i.mixed{background:#8250df}
"#;

/// The key to every scenario timeline (hover a marker or a step for its details).
pub(super) const LEGEND: &str = "<p class=\"legend\">Timelines, per scenario the provider's lane above the baseline's, on one time axis: <span><i class=\"tool\"></i>tool write</span><span><i class=\"added\"></i>ADDED</span><span><i class=\"modified\"></i>MODIFIED</span><span><i class=\"deleted\"></i>DELETED</span><span><i class=\"mixed\"></i>several kinds</span><span><i class=\"step\"></i>step (red: failed)</span>Hover a marker or a step for its details; close markers share one.</p>\n";

/// Kept free of `&` and `<` so the document stays well-formed XML too (tests parse it).
pub(super) const SCRIPT: &str = r#"
(function () {
  var byId = function (id) { return document.getElementById(id); };
  function apply() {
    var level = byId('filter-level').value;
    var outcome = byId('filter-outcome').value;
    var role = byId('filter-role').value;
    document.querySelectorAll('#matrix [data-role]').forEach(function (el) {
      el.hidden = role !== '' ? el.getAttribute('data-role') !== role : false;
    });
    document.querySelectorAll('#matrix tr.rule-row').forEach(function (row) {
      var cells = Array.prototype.filter.call(row.querySelectorAll('td.cell'), function (c) {
        return c.hidden ? false : c.hasAttribute('data-outcome');
      });
      var show = cells.length > 0;
      if (level !== '' ? row.getAttribute('data-levels').split(' ').indexOf(level) === -1 : false) {
        show = false;
      }
      if (outcome !== '' ? !cells.some(function (c) { return c.getAttribute('data-outcome') === outcome; }) : false) {
        show = false;
      }
      row.hidden = !show;
    });
    // A provider's table (and its heading) is hidden when no row of it is left.
    document.querySelectorAll('#matrix table.matrix-table').forEach(function (table) {
      var rows = table.querySelectorAll('tr.rule-row');
      var any = Array.prototype.some.call(rows, function (row) { return !row.hidden; });
      var wrap = table.parentElement;
      var heading = wrap.previousElementSibling;
      wrap.hidden = !any;
      if (heading ? heading.tagName === 'H3' : false) { heading.hidden = !any; }
    });
  }
  ['filter-level', 'filter-outcome', 'filter-role'].forEach(function (id) {
    byId(id).addEventListener('change', apply);
  });
  function openTarget() {
    var el = location.hash ? byId(location.hash.slice(1)) : null;
    if (el ? el.tagName === 'DETAILS' : false) { el.open = true; }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
  // A view from the URL query: level, outcome and role preset the filters; open=ID,ID expands
  // those failures; only=ID,ID keeps just those sections (and the sections around them) shown.
  var query = new URLSearchParams(location.search);
  var preset = ['level', 'outcome', 'role'].filter(function (name) { return query.has(name); });
  preset.forEach(function (name) { byId('filter-' + name).value = query.get(name); });
  if (preset.length > 0) { apply(); }
  (query.get('open') || '').split(',').forEach(function (id) {
    var el = id !== '' ? byId(id) : null;
    if (el ? el.tagName === 'DETAILS' : false) { el.open = true; }
  });
  var only = (query.get('only') || '').split(',').filter(function (id) { return id !== ''; })
    .map(byId).filter(function (el) { return el !== null; });
  if (only.length > 0) {
    document.querySelectorAll('section').forEach(function (s) {
      s.hidden = !only.some(function (k) { return k === s ? true : (k.contains(s) ? true : s.contains(k)); });
    });
  }
})();
"#;
