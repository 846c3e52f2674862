import QRCode from 'qrcode';
import type { CheckoutState } from './checkout-state.js';
import { escapeHtml as e, scriptJson } from './html.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

/** One inline SVG QR code per distinct address (the address itself is encoded). */
async function qrCodes(state: CheckoutState): Promise<string> {
  const addresses = [...new Set(state.options.map((o) => o.address))];
  const svgs = await Promise.all(addresses.map((address) => QRCode.toString(address, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' })));
  return addresses.map((address, i) => `<div data-qr="${e(address)}"${i === 0 ? '' : ' hidden'}>${svgs[i]}</div>`).join('');
}

function optionsHtml(state: CheckoutState): string {
  return state.options
    .map(
      (o, i) =>
        `<label class="option"><input type="radio" name="route" value="${i}"${i === 0 ? ' checked' : ''} data-network-id="${o.networkId}" data-token="${e(o.token)}"> <span>${e(o.chainName)}</span> <span class="tok">${e(o.token)}</span></label>`,
    )
    .join('');
}

function simulateHtml(state: CheckoutState): string {
  if (!state.simulate) {
    return `<section><p class="note">Live environment: send the amount to the address above; this page updates when it arrives.</p></section>`;
  }
  return `<section class="simulate" id="simulate">
  <h2>Simulate · test environment</h2>
  <div class="buttons">
    <button id="pay-half" type="button">Pay half</button>
    <button id="pay-full" type="button" class="primary">Pay remaining</button>
    <button id="pay-excess" type="button">Overpay</button>
    <button id="expire" type="button">Expire now</button>
  </div>
  <p class="note" id="sim-note">Buttons post to the sandbox's /sandbox endpoints, as a chain deposit would.</p>
</section>`;
}

/** The hosted checkout page at a resource's `checkoutUrl`: server-rendered, one inline script. */
export async function renderCheckoutPage(state: CheckoutState): Promise<string> {
  const first = state.options[0];
  const unit = state.token ?? [...new Set(state.options.map((o) => o.token))].join(' / ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Checkout · ${e(state.amount)} ${e(unit)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<main class="card">
<header>
  <div class="brand">checkout-kit<small>sandbox ${e(state.kind)}</small></div>
  <span class="env env-${state.environment}">${state.environment.toUpperCase()}</span>
</header>
<section>
  <div class="due">
    <div><div class="label">Amount due</div><div class="big"><span id="amount">${e(state.amount)}</span><span class="unit">${e(unit)}</span></div></div>
    <span id="status" class="pill" data-status="${state.status}">${e(state.status)}</span>
  </div>
  <div class="progress"><div id="bar" style="width:${state.percent}%"></div></div>
  <dl class="figures">
    <div><dt>Received</dt><dd id="received">${e(state.amountReceived)}</dd></div>
    <div><dt>Remaining</dt><dd id="remaining">${e(state.remaining)}</dd></div>
    <div id="surplus-row" hidden><dt>Surplus</dt><dd id="surplus">${e(state.surplus)}</dd></div>
    <div><dt>Expires in</dt><dd id="expires">—</dd></div>
  </dl>
</section>
<section id="pay">
  <h2>Pay with</h2>
  <div class="options" role="radiogroup" aria-label="Network and token">${optionsHtml(state)}</div>
  <div class="address-box">
    <div class="qr" id="qr">${await qrCodes(state)}</div>
    <div class="send">
      <p>Send <b id="send-amount">${e(state.remaining)} ${e(first?.token ?? '')}</b> on <b id="send-chain">${e(first?.chainName ?? '')}</b> to</p>
      <code id="address">${e(first?.address ?? '')}</code>
      <button id="copy" type="button" class="copy">Copy address</button>
    </div>
  </div>
</section>
${simulateHtml(state)}
<footer>
  <a id="cancel-link" class="cancel" href="${e(state.cancelUrl ?? '#')}"${state.cancelUrl ? '' : ' hidden'}>Cancel and return to the shop</a>
  <a id="success-link" class="button primary" href="${e(state.successUrl ?? '#')}" hidden>Payment received · return to the shop</a>
</footer>
</main>
<script type="application/json" id="initial-state">${scriptJson(state)}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>`;
}
