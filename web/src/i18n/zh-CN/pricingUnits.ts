/** 非 Token 计价（图片、音频、语音、重排、长提示词阶梯）在价格编辑、价格页与日志中的中文文案。 */
const pricingUnits = {
  per_image: '每张图片',
  per_audio_minute: '每分钟音频',
  per_1m_chars: '每百万字符',
  per_1k_searches: '每千次检索',
  perImagePrice: '{{price}} / 张',
  perMinutePrice: '{{price}} / 分钟',
  perMillionCharsPrice: '{{price}} / 百万字符',
  perThousandSearchesPrice: '{{price}} / 千次检索',
  hint: 'Token 之外：每张图片、每分钟输入音频、每百万字符语音、每千次重排检索的美元价格。展开一行可按图片尺寸定价，或设置长提示词阶梯价。',
  sizes: '按尺寸的单张图片价格',
  sizeKey: '尺寸，如 1024x1024 或 1024x1024/hd',
  addSize: '添加尺寸',
  tiers: '长提示词的 Token 价格',
  abovePromptTokens: '提示词 Token 超过',
  addTier: '添加阶梯',
  otherUnits: '其他计价',
  sizePrice: '{{size}}：{{price}} / 张',
  tierPrice: '提示词超过 {{tokens}} Token：输入 {{input}} / 输出 {{output}}',
  sizeInvalid: '格式为 宽x高，可附加 /质量',
};

export default pricingUnits;
