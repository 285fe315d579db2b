import { describe, expect, test } from '@jest/globals';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { DEFAULT_SCHEDULE, deliverySchedule, nextRetryDelayMs, RETRY_DELAYS_SECONDS } from './retry-schedule.js';
import { generateSecret, normalizeSecret, signedHeaders } from './signing.js';
import { addressKind, addressProblem, isNonPublicAddress, targetProblem, urlFormProblem } from '../../shared/target-guard.js';
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

  test('user secrets: at least 24 characters; base64 (with or without whsec_) kept, other text keyed by its UTF-8 bytes', () => {
    const raw = Buffer.alloc(24, 9).toString('base64');
    expect(normalizeSecret(raw)).toEqual({ secret: `whsec_${raw}` });
    expect(normalizeSecret(`whsec_${raw}`)).toEqual({ secret: `whsec_${raw}` });
    expect(normalizeSecret('whsec_c2hvcnQ=')).toHaveProperty('problem');
    expect(normalizeSecret('whsec_this is not base64 text, though long')).toEqual({ problem: expect.stringMatching(/base64/) });
    expect(normalizeSecret('x'.repeat(23))).toEqual({ problem: expect.stringMatching(/at least 24 characters/) });
    expect(normalizeSecret('x'.repeat(257))).toEqual({ problem: expect.stringMatching(/at most 256/) });
    // 25 characters: not base64 (length), still a valid secret.
    const text = 'my-webhook-secret_2025!xy';
    const normalized = normalizeSecret(text);
    expect(normalized).toEqual({ secret: `whsec_${Buffer.from(text).toString('base64')}` });
    const { secret } = normalized as { secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const body = JSON.stringify({ event_type: 'collection.created' });
    const headers = signedHeaders(secret, 'msg_2', body);
    // The stored secret verifies like any other; the raw text verifies with standardwebhooks' raw format.
    expect(new StandardWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new SvixWebhook(secret).verify(body, headers)).not.toThrow();
    expect(new StandardWebhook(text, { format: 'raw' }).verify(body, headers)).toEqual(JSON.parse(body));
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
    expect(urlFormProblem('http://example.com/hook', { ...strict, allowHttp: true })).toBeNull(); // the address is checked after
    expect(urlFormProblem('ftp://example.com/hook', { ...strict, allowHttp: true })).toMatch(/scheme/);
    expect(urlFormProblem('https://user:pass@example.com/', strict)).toMatch(/credentials/);
    expect(urlFormProblem('not a url', strict)).toMatch(/valid URL/);
  });

  test('address rules: HTTPS reaches public addresses; loopback needs development mode or private targets; plain http never goes public', () => {
    expect(['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1'].map(addressKind)).toEqual(['loopback', 'loopback', 'loopback', 'loopback']);
    expect(['10.0.0.1', '169.254.169.254', 'fe80::1', 'fd00::1'].map(addressKind)).toEqual(['private', 'private', 'private', 'private']);
    expect(addressKind('8.8.8.8')).toBe('public');
    const operator = { allowHttp: false, allowPrivateTargets: false };
    const development = { allowHttp: true, allowPrivateTargets: false };
    const privateNetwork = { allowHttp: false, allowPrivateTargets: true };
    const both = { allowHttp: true, allowPrivateTargets: true };
    const allowed = (address: string, protocol: 'http:' | 'https:', policy: typeof operator) => addressProblem(address, protocol, policy) === null;
    expect(allowed('8.8.8.8', 'https:', operator)).toBe(true);
    expect(allowed('8.8.8.8', 'http:', operator)).toBe(false);
    expect(allowed('8.8.8.8', 'http:', development)).toBe(false);
    expect(allowed('8.8.8.8', 'http:', both)).toBe(false);
    expect(allowed('127.0.0.1', 'https:', operator)).toBe(false);
    expect(allowed('127.0.0.1', 'http:', development)).toBe(true);
    expect(allowed('::1', 'https:', development)).toBe(true);
    expect(allowed('127.0.0.1', 'http:', privateNetwork)).toBe(false); // http needs development mode
    expect(allowed('127.0.0.1', 'https:', privateNetwork)).toBe(true);
    expect(allowed('10.0.0.1', 'http:', development)).toBe(false);
    expect(allowed('169.254.169.254', 'https:', development)).toBe(false);
    expect(allowed('10.0.0.1', 'http:', both)).toBe(true);
    expect(addressProblem('10.0.0.1', 'https:', operator)).toMatch(/private, loopback or link-local/);
  });

  test('development mode at subscription time: http for loopback receivers only', async () => {
    const development = { allowHttp: true, allowPrivateTargets: false };
    expect(await targetProblem('http://127.0.0.1:8080/hook', development)).toBeNull();
    expect(await targetProblem('http://localhost:8080/hook', development)).toBeNull();
    expect(await targetProblem('http://[::1]:8080/hook', development)).toBeNull();
    expect(await targetProblem('http://93.184.216.34/hook', development)).toMatch(/public address/);
    expect(await targetProblem('http://10.1.2.3/hook', development)).toMatch(/private, loopback or link-local/);
    expect(await targetProblem('http://no-such-host.invalid/hook', development)).toMatch(/does not resolve/);
    expect(await targetProblem('https://93.184.216.34/hook', development)).toBeNull();
    expect(await targetProblem('http://127.0.0.1/hook', { allowHttp: false, allowPrivateTargets: true })).toMatch(/https/);
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
