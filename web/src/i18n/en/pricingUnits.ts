/** English text for prices beyond tokens (images, audio, speech, rerank, prompt tiers) in the editor, the pricing page and logs. */
const pricingUnits = {
  per_image: 'Per image',
  per_audio_minute: 'Per audio minute',
  per_1m_chars: 'Per 1M chars',
  per_1k_searches: 'Per 1K searches',
  perImagePrice: '{{price}} / image',
  perMinutePrice: '{{price}} / minute',
  perMillionCharsPrice: '{{price}} / 1M characters',
  perThousandSearchesPrice: '{{price}} / 1K searches',
  hint: 'Beyond tokens: USD per image, per minute of audio in, per 1M characters of speech, per 1,000 rerank searches. Expand a row for prices by image size and for long-prompt tiers.',
  sizes: 'Price per image by size',
  sizeKey: 'Size, e.g. 1024x1024 or 1024x1024/hd',
  addSize: 'Add a size',
  tiers: 'Token prices for long prompts',
  abovePromptTokens: 'Above prompt tokens',
  addTier: 'Add a tier',
  otherUnits: 'Other units',
  sizePrice: '{{size}}: {{price}} / image',
  tierPrice: 'Above {{tokens}} prompt tokens: {{input}} in / {{output}} out',
  sizeInvalid: 'WIDTHxHEIGHT, optionally /quality',
};

export default pricingUnits;
