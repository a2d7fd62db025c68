// app.js: fills the nowq status page from /api/v1/ every two seconds, putting every value in as text so no job name or path can become markup.
'use strict';

const REFRESH_MS = 2000;
const PAGE = 100;
let state = 'running';
let pages = [0];            // the "after" of each page shown so far

function fmtTime(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  return d.toLocaleString();
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
}

// A running job stopped by qmod (s) or by its host's idle policy (T) is
// not running: say so, with Grid Engine's letters.
function jobState(word, letters) {
  if (word === 'running' && /[sT]/.test(letters || '')) {
    return 'suspended (' + letters.replace(/^d/, '') + ')';
  }
  return word;
}

// Why a host takes no work, or only some: its execd's word, else the
// reservation that holds it or keeps it free for jobs that end in time.
function hostWhy(x) {
  if (x.busy_reason) return x.busy_reason;
  if (x.reserved) {
    return 'reserved for ' + x.reserved.name + ' of ' + x.reserved.owner +
      ' until ' + fmtTime(x.reserved.end);
  }
  if (x.reserved_next) {
    const r = x.reserved_next;
    return 'kept free for reservation ' + r.name + ' of ' + r.owner + ' from ' +
      fmtTime(r.start) + ' until ' + fmtTime(r.end) + ': jobs that would run into it wait';
  }
  return '';
}

// An empty table says so in one row across it, rather than showing
// nothing under its header.
function fill(id, rows, make, empty) {
  const table = document.getElementById(id);
  const fresh = document.createElement('tbody');
  for (const r of rows) {
    const tr = document.createElement('tr');
    make(tr, r);
    fresh.appendChild(tr);
  }
  if (rows.length === 0) {
    const tr = document.createElement('tr');
    const td = document.createElement('td');
    td.colSpan = table.querySelectorAll('thead th').length;
    td.className = 'empty';
    td.textContent = empty || 'none';
    tr.appendChild(td);
    fresh.appendChild(tr);
  }
  table.querySelector('tbody').replaceWith(fresh);
}

// A host with every slot taken is full, whatever its execd says of
// idleness: "idle" in green read as room for work.
function hostState(x) {
  return x.state === 'idle' && x.used >= x.slots ? 'full' : x.state;
}

// The job's id links to its detail view: what qstat -j shows.
function jobLink(tr, id) {
  const td = document.createElement('td');
  const a = document.createElement('a');
  a.href = '#job=' + id;
  a.textContent = String(id);
  td.appendChild(a);
  tr.appendChild(td);
}

const DETAIL_KEYS = ['id', 'name', 'owner', 'state', 'state_letters', 'queue', 'host', 'slots',
  'prio', 'submit_time', 'start_time', 'end_time', 'exit_status', 'signal', 'reason',
  'scheduling_info', 'cwd', 'argv', 'out', 'err', 'req', 'pe', 'hold', 'mail', 'rerun'];

async function showDetail() {
  const m = /^#job=(\d+)$/.exec(location.hash);
  const sec = document.getElementById('detail');
  if (!m) { sec.hidden = true; return; }
  const body = document.querySelector('#detail tbody');
  const fresh = document.createElement('tbody');
  document.getElementById('detail-title').textContent = 'Job ' + m[1];
  try {
    const j = (await get('/api/v1/job?id=' + m[1])).job;
    for (const k of DETAIL_KEYS) {
      if (j[k] === undefined || j[k] === null || j[k] === '') continue;
      const tr = document.createElement('tr');
      const v = k.endsWith('_time') ? fmtTime(j[k]) :
        typeof j[k] === 'object' ? JSON.stringify(j[k]) : j[k];
      if (v === '') continue;   // a time not reached yet
      cell(tr, k); cell(tr, v);
      fresh.appendChild(tr);
    }
  } catch (e) {
    const tr = document.createElement('tr');
    cell(tr, 'error'); cell(tr, e.message);
    fresh.appendChild(tr);
  }
  body.replaceWith(fresh);
  sec.hidden = false;
}

async function get(path) {
  const r = await fetch(path, { cache: 'no-store' });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

async function refresh() {
  try {
    const s = await get('/api/v1/summary');
    const counts = document.getElementById('counts');
    counts.replaceChildren();
    for (const [k, v] of Object.entries(s.jobs)) {
      const d = document.createElement('div');
      const b = document.createElement('b');
      b.textContent = String(v);
      d.append(b, k);
      counts.appendChild(d);
    }
    fill('masters', s.masters, (tr, m) => {
      cell(tr, m.role); cell(tr, m.address); cell(tr, m.pid); cell(tr, fmtTime(m.since));
    }, 'no masters');
    const h = await get('/api/v1/hosts');
    fill('hosts', h.hosts, (tr, x) => {
      const st = hostState(x);
      cell(tr, x.name); cell(tr, st, 'state-' + st); cell(tr, x.slots); cell(tr, x.used);
      for (const l of x.load) cell(tr, l.toFixed(2), 'num');
      cell(tr, fmtTime(x.last_seen)); cell(tr, hostWhy(x));
    }, 'no exec host has registered');
    const rv = await get('/api/v1/reservations');
    fill('reservations', rv.reservations, (tr, x) => {
      cell(tr, x.name); cell(tr, x.owner); cell(tr, x.hosts.join(' '));
      cell(tr, fmtTime(x.start)); cell(tr, fmtTime(x.end)); cell(tr, x.users.join(' '));
      cell(tr, x.state, 'state-' + x.state);
    }, 'no reservations');
    const q = await get('/api/v1/queues');
    fill('queues', q.queues, (tr, x) => {
      cell(tr, x.name); cell(tr, x.priority); cell(tr, x.hosts);
      cell(tr, x.max_running || ''); cell(tr, x.max_running_per_user || '');
      cell(tr, x.disabled ? 'disabled' : 'enabled', x.disabled ? 'state-disabled' : '');
    }, 'no queues');
    if (s.show_all_jobs) {
      const after = pages[pages.length - 1];
      const j = await get('/api/v1/jobs?state=' + state + '&limit=' + PAGE + '&after=' + after);
      const col = {};
      j.columns.forEach((c, i) => { col[c] = i; });
      fill('jobs', j.rows, (tr, r) => {
        jobLink(tr, r[col.id]); cell(tr, r[col.task] || r[col.tasks] || '');
        cell(tr, r[col.name]); cell(tr, r[col.owner]);
        const st = jobState(r[col.state], r[col.state_letters]);
        cell(tr, st, 'state-' + st.split(' ')[0]);
        cell(tr, r[col.queue]); cell(tr, r[col.host]); cell(tr, r[col.slots]);
        cell(tr, fmtTime(r[col.submit_time])); cell(tr, fmtTime(r[col.start_time]));
      }, 'no ' + state + ' jobs');
      document.getElementById('pageinfo').textContent =
        j.total + ' ' + state + ', page ' + pages.length;
      const next = document.getElementById('next');
      next.disabled = j.next_after === null;
      next.dataset.after = j.next_after === null ? '' : String(j.next_after);
      const c = await get('/api/v1/cron');
      fill('cron', c.entries, (tr, e) => {
        cell(tr, 'c' + e.id); cell(tr, e.owner); cell(tr, e.schedule); cell(tr, e.name);
        cell(tr, fmtTime(e.next_run)); cell(tr, e.last_job || ''); cell(tr, e.last_state || '');
      }, 'no cron entries');
    } else {
      document.getElementById('pageinfo').textContent = 'jobs are shown to their owners only (qstat)';
    }
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    document.getElementById('error').hidden = true;
  } catch (e) {
    const err = document.getElementById('error');
    err.textContent = 'cannot reach the master: ' + e.message;
    err.hidden = false;
  }
}

function showTab() {
  for (const b of document.querySelectorAll('#tabs button')) {
    b.classList.toggle('on', b.dataset.state === state);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  for (const b of document.querySelectorAll('#tabs button')) {
    b.addEventListener('click', () => { state = b.dataset.state; pages = [0]; showTab(); refresh(); });
  }
  document.getElementById('first').addEventListener('click', () => { pages = [0]; refresh(); });
  document.getElementById('next').addEventListener('click', (ev) => {
    if (ev.target.dataset.after) { pages.push(Number(ev.target.dataset.after)); refresh(); }
  });
  window.addEventListener('hashchange', showDetail);
  document.getElementById('detail-close').addEventListener('click', () => { location.hash = ''; });
  showTab();
  refresh();
  showDetail();
  setInterval(refresh, REFRESH_MS);
});
