import type { PhraseLanguage, VerificationPhrase } from '../../common/resources.ts';

/**
 * Phrases a speaker reads aloud to prove a cloned voice is their own. Several per language,
 * handed out at random, so a recording made for one request cannot simply be replayed.
 */
const PHRASES: Readonly<Record<PhraseLanguage, readonly string[]>> = {
  zh: [
    '我确认这是我本人的声音，并同意用它创建一个定制语音。',
    '今天天气晴朗，我正在录制这段话来验证我的声音。',
    '请使用这段录音来确认我是这个声音的主人。',
  ],
  en: [
    'I confirm that this is my own voice and I agree to create a custom voice from it.',
    'The sun is shining today and I am recording this sentence to verify my voice.',
    'Please use this recording to confirm that I am the owner of this voice.',
  ],
  es: [
    'Confirmo que esta es mi propia voz y acepto crear una voz personalizada con ella.',
    'Hoy hace un día soleado y estoy grabando esta frase para verificar mi voz.',
    'Por favor, utiliza esta grabación para comprobar que soy el dueño de esta voz.',
  ],
  fr: [
    "Je confirme que ceci est ma propre voix et j'accepte d'en créer une voix personnalisée.",
    "Il fait beau aujourd'hui et j'enregistre cette phrase pour vérifier ma voix.",
    'Veuillez utiliser cet enregistrement pour vérifier que je suis le propriétaire de cette voix.',
  ],
  pt: [
    'Confirmo que esta é a minha própria voz e concordo em criar uma voz personalizada com ela.',
    'Hoje está um dia de sol e estou gravando esta frase para verificar a minha voz.',
    'Por favor, use esta gravação para confirmar que sou o dono desta voz.',
  ],
  de: [
    'Ich bestätige, dass dies meine eigene Stimme ist, und bin einverstanden, daraus eine individuelle Stimme zu erstellen.',
    'Heute scheint die Sonne, und ich nehme diesen Satz auf, um meine Stimme zu bestätigen.',
    'Bitte verwenden Sie diese Aufnahme, um zu prüfen, dass ich der Inhaber dieser Stimme bin.',
  ],
  ja: [
    'これは私自身の声であり、この声からカスタムボイスを作成することに同意します。',
    '今日はよく晴れていて、声を確認するためにこの文を録音しています。',
    'この録音を使って、私がこの声の持ち主であることを確認してください。',
  ],
  ko: [
    '이것은 제 목소리이며, 이 목소리로 맞춤 음성을 만드는 것에 동의합니다.',
    '오늘은 날씨가 맑고, 제 목소리를 확인하기 위해 이 문장을 녹음하고 있습니다.',
    '이 녹음으로 제가 이 목소리의 주인임을 확인해 주세요.',
  ],
  hi: [
    'मैं पुष्टि करता हूँ कि यह मेरी अपनी आवाज़ है और मैं इससे एक कस्टम आवाज़ बनाने के लिए सहमत हूँ।',
    'आज धूप खिली है और मैं अपनी आवाज़ की पुष्टि के लिए यह वाक्य रिकॉर्ड कर रहा हूँ।',
    'कृपया इस रिकॉर्डिंग से पुष्टि करें कि यह आवाज़ मेरी है।',
  ],
  ru: [
    'Я подтверждаю, что это мой собственный голос, и согласен создать на его основе пользовательский голос.',
    'Сегодня солнечный день, и я записываю эту фразу, чтобы подтвердить свой голос.',
    'Пожалуйста, используйте эту запись, чтобы убедиться, что это мой голос.',
  ],
};

/** A phrase of `language`; `pick` (0 ≤ pick < 1, random by default) chooses which. */
export function sandboxVerificationPhrase(language: PhraseLanguage, pick = Math.random()): VerificationPhrase {
  const phrases = PHRASES[language];
  const index = Math.min(phrases.length - 1, Math.floor(pick * phrases.length));
  return { phrase_id: `vp-${language}-${index + 1}`, phrase_text: phrases[index] as string };
}

/** Every phrase of a language, for tests and documentation. */
export const verificationPhrasesOf = (language: PhraseLanguage): readonly string[] => PHRASES[language];
