// Mail: the test message an instance's owners and admins send to check the SMTP settings
// (/api/admin/mail/test), and, on the leader, the dispatcher that sends what the other services
// queued in their own transactions (lib/mail/outbox.ts). Thin actions over lib/mail.
import { Type } from '@sinclair/typebox';
import type { Context, ServiceSchema } from 'moleculer';
import { envName } from '../lib/brand.ts';
import { badGateway, conflict } from '../lib/errors.ts';
import { createMailDispatcher } from '../lib/mail/dispatcher.ts';
import { MAIL_QUEUED } from '../lib/mail/outbox.ts';
import { createMailQueue } from '../lib/mail/queue.ts';
import { renderMail } from '../lib/mail/templates.ts';
import { createMailTransport, MailSendError, mailConfigured, type MailTransport } from '../lib/mail/transport.ts';
import { action } from '../lib/openapi/action.ts';
import { object } from '../lib/openapi/responses.ts';
import type { SendLoop } from '../lib/outbox/send-loop.ts';
import type { Runtime } from '../lib/runtime.ts';
import { writeInstanceAudit } from '../lib/users/admin.ts';
import type { RequestMeta } from '../types/meta.ts';

export const notConfigured = () => conflict(`Mail is not configured on this instance: set ${envName('SMTP_URL')} (or ${envName('SMTP_HOST')}) and ${envName('MAIL_FROM')}`);

export default function createMailService(runtime: Runtime): ServiceSchema {
  const { config, log } = runtime;
  const configured = mailConfigured(config);
  let transport: MailTransport | null = null;
  let dispatcher: SendLoop | undefined;
  let unplug: (() => Promise<void>) | undefined;

  return {
    name: 'mail',
    settings: { rest: '/' },
    actions: {
      test: action({
        rest: 'POST /api/admin/mail/test',
        auth: 'user',
        access: { instance: 'admin' },
        params: { $$strict: true, to: { type: 'email', max: 254 } },
        openapi: {
          summary: 'Send a test message now, not through the queue (instance owners and admins): 409 without an SMTP server, 502 with the server’s answer when it refuses',
          tags: ['admin'],
          response: object({ status: Type.Literal('sent'), to: Type.String() }),
          errors: [409, 502],
        },
        async handler(ctx: Context<{ to: string }, RequestMeta>) {
          if (!transport) throw notConfigured();
          const user = ctx.meta.user!;
          const rendered = renderMail('test', { requested_by: user.email }, { publicUrl: config.publicUrl });
          try {
            await transport.send({ id: crypto.randomUUID(), to: ctx.params.to, ...rendered });
          } catch (err) {
            if (err instanceof MailSendError) throw badGateway(`The mail server did not take the message: ${err.reason}`);
            throw err;
          }
          await writeInstanceAudit(runtime.metadata(), { action: 'mail.test_sent', actor: user, target: user, details: ctx.params.to });
          return { status: 'sent' as const, to: ctx.params.to };
        },
      }),
    },

    events: {
      /** Something was queued (on any node): the leader's dispatcher looks at once, not at its next sweep. */
      [MAIL_QUEUED]() {
        dispatcher?.wake();
      },
    },

    started() {
      transport = configured ? createMailTransport(config) : null;
      dispatcher = createMailDispatcher({
        queue: (epoch) => createMailQueue(runtime.metadata, (fn) => runtime.fence.run(epoch, fn)),
        transport,
        context: { publicUrl: config.publicUrl },
        settings: {
          maxAttempts: config.mailMaxAttempts,
          retryBaseSeconds: config.mailRetryBaseSeconds,
          retryMaxSeconds: config.mailRetryMaxSeconds,
          sweepSeconds: config.mailSweepSeconds,
          timeoutSeconds: config.mailTimeoutSeconds,
        },
        log,
        onAttempt: (outcome) => runtime.metrics.mailAttempt(outcome.ok),
      });
      const current = dispatcher;
      unplug = runtime.mailDispatch.plug({ start: (epoch) => current.start(epoch), stop: () => current.stop() });
    },

    async stopped() {
      await unplug?.();
      unplug = undefined;
      await dispatcher?.stop();
      dispatcher = undefined;
      transport?.close();
      transport = null;
    },
  };
}
