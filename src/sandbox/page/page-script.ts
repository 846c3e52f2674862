/**
 * The checkout page's script: keeps the figures live (polls the state endpoint every second),
 * switches the shown address with the chosen network/token, and drives the simulation buttons.
 * Amounts are shown exactly as the server sends them; the page does no arithmetic on money.
 */
export const PAGE_SCRIPT = `
(() => {
  const $ = (id) => document.getElementById(id);
  let state = JSON.parse($('initial-state').textContent);
  const LABELS = { CREATED: 'Awaiting payment', PARTIALLY_PAID: 'Partially paid', PAID: 'Paid', OVERPAID: 'Overpaid', EXPIRED: 'Expired' };

  function selected() {
    const input = document.querySelector('input[name="route"]:checked');
    return input ? state.options[Number(input.value)] : undefined;
  }

  function countdown() {
    const ms = Date.parse(state.expiresAt) - Date.now();
    if (ms <= 0) return 'expired';
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + ':' + String(m).padStart(2, '0') : m) + ':' + String(r).padStart(2, '0');
  }

  function render() {
    const status = $('status');
    status.dataset.status = state.status;
    status.textContent = LABELS[state.status] || state.status;
    $('received').textContent = state.amountReceived;
    $('remaining').textContent = state.remaining;
    $('bar').style.width = state.percent + '%';
    $('expires').textContent = state.paid ? '—' : countdown();
    $('surplus-row').hidden = state.status !== 'OVERPAID';
    $('surplus').textContent = state.surplus;
    const option = selected();
    if (option) {
      $('address').textContent = option.address;
      $('send-amount').textContent = (state.paid ? '0' : state.remaining) + ' ' + option.token;
      $('send-chain').textContent = option.chainName;
      for (const qr of document.querySelectorAll('[data-qr]')) qr.hidden = qr.dataset.qr !== option.address;
    }
    $('pay').hidden = state.paid;
    $('success-link').hidden = !state.paid || !state.successUrl;
    $('cancel-link').hidden = state.paid || !state.cancelUrl;
    const sim = state.simulate;
    if (sim && $('simulate')) {
      $('pay-half').disabled = !sim.half;
      $('pay-full').disabled = !sim.full;
      $('pay-half').textContent = sim.half ? 'Pay half (' + sim.half + ')' : 'Pay half';
      $('pay-full').textContent = sim.full ? 'Pay remaining (' + sim.full + ')' : 'Pay remaining';
      $('pay-excess').disabled = false;
      $('pay-excess').textContent = 'Overpay (' + sim.excess + ')';
      $('expire').disabled = !sim.canExpire;
    }
  }

  async function refresh() {
    try {
      const response = await fetch('/checkout/' + state.id + '/state', { cache: 'no-store' });
      if (response.ok) { state = await response.json(); render(); }
    } catch { /* the sandbox may be restarting: try again next second */ }
  }

  async function simulate(action, amount) {
    const option = selected();
    const body = action === 'deposit' ? { amount, networkId: option.networkId, token: option.token } : {};
    for (const b of document.querySelectorAll('.simulate button')) b.disabled = true;
    const response = await fetch('/sandbox/' + state.kind + 's/' + state.id + '/' + action, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    const json = await response.json().catch(() => ({}));
    $('sim-note').textContent = response.ok
      ? (action === 'deposit' ? 'Simulated a deposit of ' + amount + ' ' + option.token + ' on ' + option.chainName + '.' : 'Expired.')
      : 'Failed: ' + ((json.error && json.error.message) || response.status);
    await refresh();
  }

  for (const input of document.querySelectorAll('input[name="route"]')) input.addEventListener('change', render);
  $('copy').addEventListener('click', () => navigator.clipboard && navigator.clipboard.writeText($('address').textContent));
  if ($('simulate')) {
    $('pay-half').addEventListener('click', () => simulate('deposit', state.simulate.half));
    $('pay-full').addEventListener('click', () => simulate('deposit', state.simulate.full));
    $('pay-excess').addEventListener('click', () => simulate('deposit', state.simulate.excess));
    $('expire').addEventListener('click', () => simulate('expire'));
  }
  render();
  setInterval(refresh, 1000);
})();
`;
