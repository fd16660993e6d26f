import { describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { PHRASE_LANGUAGES } from '../../providers/common/resources.ts';
import { sandboxResources } from '../../providers/sandbox/resources/index.ts';
import { SANDBOX_MODEL_FAMILY, normaliseStringVoice } from '../../providers/sandbox/resources/string-voices.ts';
import {
  sandboxVerificationPhrase,
  verificationPhrasesOf,
} from '../../providers/sandbox/resources/verification-phrases.ts';
import { sandboxSpeechModel } from '../../providers/sandbox/speech-model.ts';
import { sandboxVideoModel } from '../../providers/sandbox/video-model.ts';
import type { MediaValidationContext } from '../../providers/types.ts';
import { isAudioSampleType } from '../../src/resources/audio-sample-type.ts';
import { sniffContentType } from '../../providers/common/sniff-content-type.ts';
import { parsePhraseLanguage } from '../../src/resources/resource-requests.ts';
import { EnvelopeError } from '../../src/http/errors.ts';

/** Voice resources of the sandbox (docs/api-contract.md, "Provider resources") and their use in tasks. */

const SPEC_STRING_VOICE_IDS =
  'achernar, achird, algenib, algieba, alnilam, aoede, autonoe, callirrhoe, charon, despina, enceladus, erinome, fenrir, gacrux, iapetus, kore, laomedeia, leda, orus, puck, pulcherrima, rasalgethi, sadachbia, sadaltager, schedar, sulafat, umbriel, vindemiatrix, zephyr, zubenelgenubi'.split(
    ', ',
  );
const host = { assetUrl: (name: string) => `https://gw.example/samples/${name}` };

describe('string-id voices', () => {
  test('exactly the 30 ids of the API contract, each with a description and its own sample', async () => {
    const voices = (await sandboxResources.listStringVoices!(SANDBOX_MODEL_FAMILY, host))!;
    expect(voices.map((x) => x.id)).toEqual(SPEC_STRING_VOICE_IDS);
    for (const voice of voices) {
      expect(Object.keys(voice)).toEqual(['id', 'name', 'description', 'sample']);
      expect(voice.name.toLowerCase()).toBe(voice.id);
      expect(voice.description.length).toBeGreaterThan(30);
      const asset = await sandboxResources.asset!(voice.sample.split('/').pop()!);
      expect(asset?.contentType).toBe('audio/wav');
      expect(sniffContentType(asset!.body.subarray(0, 512))).toBe('audio/wav');
    }
    expect(new Set(voices.map((x) => x.sample)).size).toBe(30);
    expect(await sandboxResources.listStringVoices!('other-family', host)).toBeUndefined();
    expect(await sandboxResources.asset!('voice-nobody.wav')).toBeUndefined();
  });

  test('lapetus is accepted as iapetus; anything else outside the 30 is not', () => {
    expect(normaliseStringVoice('lapetus')).toBe('iapetus');
    expect(normaliseStringVoice('iapetus')).toBe('iapetus');
    expect(normaliseStringVoice('zephyr')).toBe('zephyr');
    expect(normaliseStringVoice('Zephyr')).toBeUndefined();
    expect(normaliseStringVoice('alloy')).toBeUndefined();
  });

  test('sandbox/video: voice normalised, needs start_image_url; integer voices checked against the list', () => {
    const parse = (input: Record<string, unknown>) => v.safeParse(sandboxVideoModel.schema, { prompt: 'p', ...input });
    const image = { start_image_url: 'https://example.com/a.png' };
    const ok = parse({ voice: 'lapetus', ...image, voices: [1, { voice_id: 12 }] });
    expect(ok.success).toBe(true);
    expect(ok.output).toMatchObject({ voice: 'iapetus', voices: [1, 12] });
    const noImage = parse({ voice: 'kore' });
    expect(noImage.success).toBe(false);
    expect(noImage.issues?.[0].path?.map((p) => p.key)).toEqual(['voice']);
    expect(noImage.issues?.[0].message).toMatch(/start_image_url/);
    expect(parse({ voice: 'alloy', ...image }).success).toBe(false);
    expect(parse({ voices: [13] }).success).toBe(false);
    expect(parse({ voices: [1.5] }).success).toBe(false);
    expect(parse({ voices: [] }).success).toBe(false);
    expect(parse({ voices: [{ voice_id: 2 }] }).success).toBe(true);
  });
});

describe('speech voices', () => {
  test('shape of the list; built-in ids always pass validation, custom ids only when the account owns them', async () => {
    const voices = await sandboxResources.listSpeechVoices!(host);
    expect(voices.length).toBeGreaterThan(3);
    for (const voice of voices) {
      expect(voice).toEqual({
        voice_id: expect.any(String),
        name: expect.any(String),
        category: 'premade',
        labels: { accent: expect.any(String), age: expect.any(String), gender: expect.any(String) },
        preview_url: expect.stringMatching(/^https:\/\/gw\.example\/samples\/.+\.wav$/),
      });
    }
    const asked: string[] = [];
    const ctx: MediaValidationContext = {
      accountId: 7,
      customVoice: async (id) => {
        asked.push(id);
        return id === 'cv_mine' ? { voice_id: id, name: 'Mine' } : undefined;
      },
    };
    const validate = (voice_id?: string) =>
      sandboxSpeechModel.validate!({ text: 'hi', ...(voice_id ? { voice_id } : {}) }, ctx);
    expect(await validate()).toEqual([]);
    expect(await validate(voices[0]!.voice_id)).toEqual([]);
    expect(await validate('cv_mine')).toEqual([]);
    expect(await validate('cv_theirs')).toEqual([
      { path: 'voice_id', message: expect.stringContaining('unknown voice "cv_theirs"') },
    ]);
    expect(asked).toEqual(['cv_mine', 'cv_theirs']);
  });
});

describe('verification phrases', () => {
  const SCRIPTS: Record<string, RegExp> = {
    zh: /\p{Script=Han}/u,
    ja: /[\p{Script=Hiragana}\p{Script=Katakana}]/u,
    ko: /\p{Script=Hangul}/u,
    hi: /\p{Script=Devanagari}/u,
    ru: /\p{Script=Cyrillic}/u,
  };
  const WORDS: Record<string, RegExp> = {
    en: /\b(voice|my)\b/i,
    es: /\b(voz|mi)\b/i,
    fr: /\b(voix|ma)\b/i,
    pt: /\b(voz|minha)\b/i,
    de: /\b(Stimme|meine)\b/i,
  };

  test('every language of the API contract has phrases in that language; the id names the phrase', () => {
    for (const language of PHRASE_LANGUAGES) {
      const phrases = verificationPhrasesOf(language);
      expect(phrases.length).toBeGreaterThanOrEqual(2);
      for (const text of phrases) {
        if (SCRIPTS[language]) expect(text).toMatch(SCRIPTS[language]);
        else {
          expect(text).toMatch(WORDS[language]!);
          expect(text).toMatch(/^[\p{Script=Latin}\p{P}\p{Zs}]+$/u);
        }
      }
      expect(sandboxVerificationPhrase(language, 0)).toEqual({
        phrase_id: `vp-${language}-1`,
        phrase_text: phrases[0]!,
      });
      expect(sandboxVerificationPhrase(language, 0.9999).phrase_text).toBe(phrases.at(-1)!);
    }
  });

  test('language: default en, case-insensitive, anything else a 422', () => {
    expect(parsePhraseLanguage({})).toBe('en');
    expect(parsePhraseLanguage({ language: '' })).toBe('en');
    expect(parsePhraseLanguage({ language: 'JA' })).toBe('ja');
    for (const language of ['xx', 'en-US', 'it']) {
      let error: unknown;
      try {
        parsePhraseLanguage({ language });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(EnvelopeError);
      expect((error as EnvelopeError).status).toBe(422);
      expect((error as EnvelopeError).message).toMatch(
        /^language: must be one of zh, en, es, fr, pt, de, ja, ko, hi, ru$/,
      );
    }
  });
});

describe('voice sample types', () => {
  test('audio by its bytes: mp3, wav, ogg/opus, m4a, flac, webm; not text, images or AAC', () => {
    const head = (...parts: Array<string | number[]>) =>
      new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p)));
    const accepted = [
      head('ID3', [4, 0, 0, 0, 0, 0, 0]),
      head([0xff, 0xfb, 0x90, 0x64]),
      head('RIFF', [0, 0, 0, 0], 'WAVEfmt '),
      head('OggS', [0, 2], 'OpusHead'),
      head([0, 0, 0, 0x20], 'ftypM4A ', [0, 0, 0, 0]),
      head('fLaC', [0, 0, 0, 0x22]),
      head([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x84], 'webm'),
    ];
    for (const bytes of accepted) expect(isAudioSampleType(sniffContentType(bytes))).toBe(true);
    const refused = [
      head('hello, not audio'),
      head([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      head([0xff, 0xf1, 0x50, 0x80]),
      head([0, 0, 0, 0x20], 'ftypisom'),
      new Uint8Array(),
    ];
    for (const bytes of refused) expect(isAudioSampleType(sniffContentType(bytes))).toBe(false);
  });
});
