import { describe, expect, test } from '@jest/globals';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { DEFAULT_SCHEDULE, deliverySchedule, nextRetryDelayMs, RETRY_DELAYS_SECONDS } from './retry-schedule.js';
import { generateSecret, normalizeSecret, signedHeaders } from './signing.js';
import { isNonPublicAddress, targetProblem, urlFormProblem } from './target-guard.js';
import { healthStatus } from './webhook.service.js';

describe('signing', () => {
  test('generated secrets and signatures verify with standardwebhooks and svix; a changed body does not', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const body = JSON.stringify({ event_type: 'collection.created', name: 'Ünïcode ✓' });
    const headers = signedHeaders(secret, 'msg_1', body);
    expect(new StandardWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    // svix 2 returns nothing and throws on a bad signature.
    expect(() => new SvixWebhook(secret).verify(body, headers)).not.toThrow();
    expect(() => new SvixWebhook(secret).verify(body + ' ', headers)).toThrow();
    expect(() => new StandardWebhook(secret).verify(body.replace('created', 'deleted'), headers)).toThrow();
    expect(() => new StandardWebhook(generateSecret()).verify(body, headers)).toThrow();
  });

  test('user secrets: optional prefix, base64 only, at least 24 characters', () => {
    const raw = Buffer.alloc(24, 9).toString('base64');
    expect(normalizeSecret(raw)).toEqual({ secret: `whsec_${raw}` });
    expect(normalizeSecret(`whsec_${raw}`)).toEqual({ secret: `whsec_${raw}` });
    expect(normalizeSecret('whsec_c2hvcnQ=')).toHaveProperty('problem');
    expect(normalizeSecret('not base64 at all, but long enough!!')).toHaveProperty('problem');
  });
});

describe('target rules', () => {
  test('non-public addresses, IPv4 embedded in IPv6 included', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::10.0.0.1']) {
      expect([address, isNonPublicAddress(address)]).toEqual([address, true]);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect([address, isNonPublicAddress(address)]).toEqual([address, false]);
    }
  });

  test('HTTPS only unless development mode; no credentials in URLs', () => {
    const strict = { allowHttp: false, allowPrivateTargets: false };
    expect(urlFormProblem('http://example.com/hook', strict)).toMatch(/https/);
    expect(urlFormProblem('http://example.com/hook', { ...strict, allowHttp: true })).toBeNull();
    expect(urlFormProblem('ftp://example.com/hook', { ...strict, allowHttp: true })).toMatch(/scheme/);
    expect(urlFormProblem('https://user:pass@example.com/', strict)).toMatch(/credentials/);
    expect(urlFormProblem('not a url', strict)).toMatch(/valid URL/);
  });

  test('hosts that are or resolve to private addresses are refused unless allowed', async () => {
    const strict = { allowHttp: false, allowPrivateTargets: false };
    for (const url of ['https://127.0.0.1/x', 'https://[::1]:8443/x', 'https://localhost/x', 'https://169.254.169.254/latest', 'https://10.0.0.5/']) {
      expect([url, await targetProblem(url, strict)]).toEqual([url, expect.stringMatching(/private, loopback or link-local/)]);
    }
    expect(await targetProblem('https://localhost/x', { ...strict, allowPrivateTargets: true })).toBeNull();
    expect(await targetProblem('https://93.184.216.34/x', strict)).toBeNull();
  });
});

describe('retry schedule and health', () => {
  test('the documented schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed', () => {
    expect(RETRY_DELAYS_SECONDS).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect([1, 2, 7, 8].map((made) => nextRetryDelayMs(DEFAULT_SCHEDULE, made))).toEqual([5000, 300_000, 36_000_000, null]);
    expect(DEFAULT_SCHEDULE.timeoutMs).toBe(30_000);
    expect(deliverySchedule({ CATCHMENT_INTERNAL_WEBHOOK_SCHEDULE: '800:100,200' })).toEqual({ timeoutMs: 800, retryDelaysMs: [100, 200] });
    expect(() => deliverySchedule({ CATCHMENT_INTERNAL_WEBHOOK_SCHEDULE: 'soon' })).toThrow(/CATCHMENT_INTERNAL_WEBHOOK_SCHEDULE/);
  });

  test('health from the recent attempts, newest first', () => {
    expect(healthStatus([])).toBe('unknown');
    expect(healthStatus(['success', 'success'])).toBe('healthy');
    expect(healthStatus(['success', 'failed', 'failed'])).toBe('degraded');
    expect(healthStatus(['failed', 'success', 'success', 'success'])).toBe('degraded');
    expect(healthStatus(['failed', 'failed', 'success'])).toBe('failing');
  });
});
