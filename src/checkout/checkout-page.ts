import { CHECKOUT_STATUS, CheckoutSessionRow } from '../collections/checkout-session';

/** Escapes text for HTML element content and attribute values. */
function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#111}
main{max-width:26rem;margin:0 auto;padding:1.5rem 1rem}
.card{background:#fff;border:1px solid #d0d4da;border-radius:12px;padding:1.25rem}
h1{font-size:1.15rem;margin:0 0 .25rem}.merchant{color:#3b4350;margin:0 0 1rem}
.amount{font-size:2rem;font-weight:700;margin:.25rem 0}.narration{margin:0 0 1rem;color:#262b33}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{width:100%;font:inherit;padding:.7rem;border:2px solid #59616d;border-radius:8px;color:#111;background:#fff}
input:focus,button:focus{outline:3px solid #0b57d0;outline-offset:2px}
button{width:100%;margin-top:1rem;font:inherit;font-weight:700;padding:.85rem;border:0;border-radius:8px;background:#0b57d0;color:#fff;cursor:pointer}
button[disabled]{background:#59616d;cursor:wait}
.hint{font-size:.9rem;color:#3b4350;margin:.25rem 0 0}
.status{margin-top:1rem;padding:.75rem;border-radius:8px;display:none}
.status.show{display:block}.status.info{background:#e8f0fe;color:#0b2f6b}.status.ok{background:#e6f4ea;color:#0d4a1f}
.status.err{background:#fce8e6;color:#7a1010}.timer{font-size:.9rem;color:#3b4350}
`;

function layout(title: string, nonce: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${esc(title)}</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main>${body}</main>${script ? `<script nonce="${nonce}">${script}</script>` : ''}</body></html>`;
}

/** A page that explains why there is nothing to pay (unknown, expired or closed session); never a stack trace. */
export function explanationPage(nonce: string, title: string, message: string): string {
  return layout(
    title,
    nonce,
    `<div class="card" role="alert"><h1>${esc(title)}</h1><p>${esc(message)}</p>
<p class="hint">If you were paying a merchant, go back to their site and start again.</p></div>`,
  );
}

/**
 * The hosted checkout page: merchant, amount, narration, time left, the payer's number (prefilled) and a Pay
 * button. It posts to /checkout/{reference}/pay, follows the payment by polling /state without reloading, and
 * sends the payer to the merchant once paid, or offers a retry when a payment fails.
 */
export function checkoutPage(
  nonce: string,
  session: CheckoutSessionRow,
  state: { status: number; outstanding: number; amount: number; currency: string; expires_at: string },
): string {
  const base = `/checkout/${encodeURIComponent(session.checkout_reference)}`;
  const formatted = new Intl.NumberFormat('en', { maximumFractionDigits: 0 }).format(state.outstanding);
  const body = `<div class="card">
<h1>Pay ${esc(session.client_name)}</h1>
<p class="merchant">Secure mobile-money checkout</p>
<p class="amount" id="amount-due">${esc(session.currency)} ${esc(formatted)}</p>
<p class="narration">${esc(session.narration)}</p>
<p class="timer" id="timer" aria-live="off">Time left: <span id="time-left">…</span></p>
<form id="pay-form" novalidate>
<label for="msisdn">Mobile-money phone number</label>
<input id="msisdn" name="msisdn" type="tel" inputmode="tel" autocomplete="tel" required
 value="${esc(session.payer_msisdn)}" aria-describedby="msisdn-hint">
<p class="hint" id="msisdn-hint">With the country code, for example 254712345678. You will confirm on your phone.</p>
<button id="pay" type="submit">Pay ${esc(session.currency)} ${esc(formatted)}</button>
</form>
<div id="status" class="status" role="status" aria-live="polite"></div>
</div>`;
  const script = `(function(){
var base=${JSON.stringify(base)},expires=new Date(${JSON.stringify(state.expires_at)}).getTime();
var form=document.getElementById('pay-form'),button=document.getElementById('pay'),box=document.getElementById('status');
var input=document.getElementById('msisdn'),timeLeft=document.getElementById('time-left'),polling=null,label=button.textContent;
function show(kind,text){box.className='status show '+kind;box.textContent=text;}
function busy(on,text){button.disabled=on;input.disabled=on;button.textContent=on?text:label;}
function tick(){var ms=expires-Date.now();if(ms<=0){timeLeft.textContent='expired';busy(true,'Checkout expired');show('err','This checkout has expired. Go back to the merchant to start again.');clearInterval(timer);return;}
var m=Math.floor(ms/60000),s=Math.floor(ms%60000/1000);timeLeft.textContent=m+' min '+(s<10?'0':'')+s+' s';}
var timer=setInterval(tick,1000);tick();
function poll(){fetch(base+'/state',{headers:{accept:'application/json'}}).then(function(r){return r.json();}).then(function(st){
if(st.status===${CHECKOUT_STATUS.PAID}&&st.redirect_to){clearInterval(polling);show('ok','Payment received. Taking you back to the merchant…');setTimeout(function(){window.location.assign(st.redirect_to);},800);return;}
if(st.status===${CHECKOUT_STATUS.PROCESSING}){return;}
clearInterval(polling);polling=null;
if(st.status===${CHECKOUT_STATUS.PART_PAID}){busy(false);show('err','Part of the amount was paid. '+st.currency+' '+st.outstanding+' is still due: you can pay it now.');return;}
if(st.status===${CHECKOUT_STATUS.EXPIRED}||st.expired){busy(true,'Checkout expired');show('err','This checkout has expired.');return;}
if(st.status===${CHECKOUT_STATUS.JAMMED}){busy(true,'Payment under review');show('err','Your payment needs a manual check. The merchant will be told the result.');return;}
busy(false);show('err','The payment did not go through. Check the number and your balance, then try again.');
}).catch(function(){});}
if(${state.status === CHECKOUT_STATUS.PROCESSING ? 'true' : 'false'}){busy(true,'Processing…');show('info','Confirm the payment on your phone. This page updates by itself.');polling=setInterval(poll,1000);}
form.addEventListener('submit',function(ev){ev.preventDefault();var msisdn=input.value.trim();
if(!/^\\+?\\d{6,24}$/.test(msisdn)){show('err','Enter the phone number with its country code, digits only.');input.focus();return;}
busy(true,'Processing…');show('info','Confirm the payment on your phone. This page updates by itself.');
fetch(base+'/pay',{method:'POST',headers:{'content-type':'application/json',accept:'application/json'},body:JSON.stringify({msisdn:msisdn})})
.then(function(r){return r.json().then(function(b){return {ok:r.ok,body:b};});}).then(function(res){
if(!res.ok){busy(false);show('err',res.body&&res.body.message?String(res.body.message):'The payment could not be started.');return;}
polling=setInterval(poll,1000);}).catch(function(){busy(false);show('err','No connection. Try again.');});});
})();`;
  return layout(`Pay ${session.client_name}`, nonce, body, script);
}
