// The mail dispatcher, run by the leader only: the outbox send loop (lib/outbox/send-loop.ts) over
// mail messages. It claims due messages, renders each from its template, sends it over SMTP and
// records the outcome (sent, or retried later with exponential backoff, or failed after the last
// attempt); the loop's sweep re-queues claims whose node died mid-send and purges old history.
// Without an SMTP server nothing is claimed: what is queued is discarded instead, so nothing is
// ever sent, now or later.
import type { Log } from '../log.ts';
import { createSendLoop, type SendLoop, type SendOutcome, type SendResult } from '../outbox/send-loop.ts';
import type { ClaimedMessage, MailQueue } from './queue.ts';
import { type MailContext, renderMail } from './templates.ts';
import { MailSendError, type MailTransport } from './transport.ts';

export interface MailDispatcherSettings {
  maxAttempts: number;
  retryBaseSeconds: number;
  retryMaxSeconds: number;
  sweepSeconds: number;
  timeoutSeconds: number;
}

export interface MailDispatcherDeps {
  /** The queue whose writes are fenced by this leadership's epoch. */
  queue: (epoch: number) => MailQueue;
  /** null: no SMTP server is set, queued messages are discarded. */
  transport: MailTransport | null;
  context: MailContext;
  settings: MailDispatcherSettings;
  log: Log;
  /** Told of every attempt once it is recorded (the node's metrics). */
  onAttempt?: (outcome: SendOutcome) => void;
}

/** Messages sent at once; a small instance's mail is a trickle. */
const CONCURRENCY = 4;
/** Time to record the outcome once a send's deadlines have passed. */
const LEASE_GRACE_SECONDS = 10;
const RETENTION_DAYS = 30;

export function createMailDispatcher(deps: MailDispatcherDeps): SendLoop {
  const { settings, log, transport } = deps;

  async function send(message: ClaimedMessage, sender: MailTransport): Promise<SendResult<SendOutcome>> {
    try {
      const rendered = renderMail(message.template, message.params, deps.context);
      await sender.send({ id: message.id, to: message.recipient, ...rendered });
      return { error: null };
    } catch (err) {
      if (err instanceof MailSendError) return { error: err.reason };
      log.error({ err, messageId: message.id }, 'mail message could not be rendered');
      return { error: 'render_failed' };
    }
  }

  /** Without a server the claim discards everything waiting and claims nothing. */
  async function discardWaiting(queue: MailQueue): Promise<ClaimedMessage[]> {
    const discarded = await queue.discardWaiting();
    if (discarded > 0) log.info({ discarded }, 'mail discarded: no SMTP server is configured');
    return [];
  }

  return createSendLoop<ClaimedMessage, SendOutcome>({
    noun: { one: 'mail message', many: 'mail messages' },
    queue(epoch) {
      const queue = deps.queue(epoch);
      return transport ? queue : { ...queue, claim: () => discardWaiting(queue) };
    },
    // Only a loop with a transport claims anything to send.
    send: (message) => send(message, transport!),
    logFields: (message) => ({ messageId: message.id, template: message.template }),
    settings: {
      concurrency: CONCURRENCY,
      // A send may run into the connection's, the greeting's and the socket's timeouts in turn.
      leaseSeconds: settings.timeoutSeconds * 3 + LEASE_GRACE_SECONDS,
      maxAttempts: settings.maxAttempts,
      retryBaseSeconds: settings.retryBaseSeconds,
      retryMaxSeconds: settings.retryMaxSeconds,
      sweepSeconds: settings.sweepSeconds,
      retentionDays: RETENTION_DAYS,
    },
    log,
    onAttempt: deps.onAttempt,
  });
}
