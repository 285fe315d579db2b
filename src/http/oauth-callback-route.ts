import { Router, type Request, type Response } from 'express';
import type { Logger } from '../platform/logger.js';
import { OAUTH_CALLBACK_PATH } from '../modules/connections/oauth/callback-address.js';
import type { CallbackOutcome, OAuthCallback } from '../modules/connections/oauth/oauth-callback.js';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * GET /oauth/callback, where OAuth providers send the browser back (RFC 6749 §4.1.2). No API key: the
 * sign-in's `state` authenticates it. Its URL holds the code and state, so the answer is never cached
 * and never passed on as a Referer.
 */
export function oauthCallbackRouter(callback: OAuthCallback, logger: Logger): Router {
  const router = Router();
  router.get(OAUTH_CALLBACK_PATH, async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    let outcome: CallbackOutcome;
    try {
      outcome = await callback.complete({ state: req.query.state, code: req.query.code, error: req.query.error });
    } catch (error) {
      logger.error({ err: error, requestId: res.locals.requestId }, 'OAuth callback failed');
      outcome = { page: { status: 500, title: 'Sign-in failed', message: 'The sign-in could not be completed because of an internal error: try again.' } };
    }
    if ('redirect' in outcome) {
      res.redirect(302, outcome.redirect);
      return;
    }
    const { status, title, message } = outcome.page;
    res
      .status(status)
      .setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'")
      .type('html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Catchment</title>` +
          `<style>body{font:16px system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>` +
          `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`,
      );
  });
  return router;
}
