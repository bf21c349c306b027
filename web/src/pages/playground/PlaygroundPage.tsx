import { CopyOutlined, PictureOutlined, SendOutlined, StopOutlined } from '@ant-design/icons';
import { App, Button, Card, Col, Empty, Flex, Form, Input, InputNumber, Row, Select, Space, Tag, Typography, Upload } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorDetails } from '../../components/ErrorDetails';
import { useBaseUrl, useKeyModels } from '../../api/relay';
import { useAllTokens, useRevealToken } from '../../api/tokens';
import { PageHeader } from '../../components/PageHeader';
import { StepUpCancelled, useStepUp } from '../../components/StepUp';
import { useFormat } from '../../lib/useFormat';
import { asCurl, type ChatImage } from './chat';
import { useChat, type Answer } from './useChat';

/** Tokens, cost and latency of one answer: its log row's once written, the stream's usage until then. */
function AnswerStats({ answer, index }: { answer: Answer; index: number }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const log = answer.log;
  const prompt = log?.prompt_tokens ?? answer.usage?.prompt_tokens;
  const completion = log?.completion_tokens ?? answer.usage?.completion_tokens;
  return (
    <Space size={[12, 4]} wrap data-testid={`pg-stats-${index}`} style={{ fontSize: 12 }}>
      <Typography.Text type="secondary">
        {t('playground.tokensInOut')}: <span data-testid={`pg-prompt-${index}`}>{fmt.number(prompt)}</span> /{' '}
        <span data-testid={`pg-completion-${index}`}>{fmt.number(completion)}</span>
      </Typography.Text>
      <Typography.Text type="secondary">
        {t('playground.cost')}: <span data-testid={`pg-cost-${index}`}>{log ? fmt.money(log.cost) : t('playground.pending')}</span>
      </Typography.Text>
      <Typography.Text type="secondary">
        {t('playground.latency')}:{' '}
        <span data-testid={`pg-latency-${index}`}>{fmt.duration(log?.elapsed_ms ?? answer.clientMs)}</span>
      </Typography.Text>
      {log ? <Tag color="green">{t('playground.fromLog')}</Tag> : null}
      {answer.requestId ? (
        <Typography.Text type="secondary" className="tg-mono" data-testid={`pg-request-${index}`}>
          {answer.requestId}
        </Typography.Text>
      ) : null}
    </Space>
  );
}

/**
 * Try a model with one of your keys: streaming chat with a system prompt, temperature, max tokens and images;
 * each answer shows its tokens, cost and latency as billed (its log row), and copies as a curl command.
 */
export default function PlaygroundPage() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const baseUrl = useBaseUrl();
  const tokens = useAllTokens();
  const reveal = useRevealToken();
  const stepUp = useStepUp();
  const [tokenId, setTokenId] = useState<number | null>(null);
  const [key, setKey] = useState<string | null>(null);
  const models = useKeyModels(key);
  const [model, setModel] = useState<string | null>(null);
  const [system, setSystem] = useState('');
  const [temperature, setTemperature] = useState<number | null>(null);
  const [maxTokens, setMaxTokens] = useState<number | null>(null);
  const [input, setInput] = useState('');
  const [images, setImages] = useState<ChatImage[]>([]);
  const chat = useChat();
  const activeModel = model ?? models.data?.[0] ?? null;

  const pickKey = (id: number) => {
    setTokenId(id);
    setKey(null);
    setModel(null);
    stepUp
      .run((code) => reveal.mutateAsync({ id, code }))
      .then((res) => setKey(res.key))
      .catch((err: Error) => {
        if (!(err instanceof StepUpCancelled)) message.error(err.message);
      });
  };
  const onSend = () => {
    if (!key || !activeModel || !input.trim()) return;
    void chat.send(key, { model: activeModel, system, temperature, maxTokens }, { role: 'user', content: input, images });
    setInput('');
    setImages([]);
  };
  const copyCode = (answer: Answer) =>
    void navigator.clipboard
      .writeText(asCurl(baseUrl, key ?? '$TOLLGATE_API_KEY', answer.body))
      .then(() => message.success(t('common.copied')))
      .catch(() => message.error(t('playground.copyFailed')));
  const addImage = (file: File) => {
    const reader = new FileReader();
    reader.onload = () => setImages((imgs) => [...imgs, { url: String(reader.result), name: file.name }]);
    reader.readAsDataURL(file);
    return false; // never upload: the image goes inline in the request
  };

  const keyOptions = (tokens.data?.items ?? [])
    .filter((k) => k.status === 'enabled')
    .map((k) => ({ value: k.id, label: `${k.name} (${k.key})` }));

  return (
    <>
      <PageHeader title={t('playground.title')} />
      <Row gutter={[16, 16]}>
        <Col xs={24} lg={8}>
          <Card size="small" title={<h2 className="tg-card-title">{t('playground.settings')}</h2>}>
            <Form layout="vertical" component="div">
              <Form.Item label={t('playground.key')} htmlFor="pg-key" extra={t('playground.keyHint')}>
                <Select
                  id="pg-key"
                  data-testid="pg-key"
                  value={tokenId ?? undefined}
                  options={keyOptions}
                  loading={tokens.isPending || reveal.isPending}
                  onChange={pickKey}
                  placeholder={t('playground.pickKey')}
                  notFoundContent={t('playground.noKeys')}
                />
              </Form.Item>
              <Form.Item label={t('playground.model')} htmlFor="pg-model">
                <Select
                  id="pg-model"
                  data-testid="pg-model"
                  value={activeModel ?? undefined}
                  disabled={!key}
                  loading={models.isFetching}
                  showSearch
                  options={(models.data ?? []).map((m) => ({ value: m, label: m }))}
                  onChange={setModel}
                  notFoundContent={t('playground.noModels')}
                />
              </Form.Item>
              <Form.Item label={t('playground.system')} htmlFor="pg-system">
                <Input.TextArea id="pg-system" data-testid="pg-system" autoSize={{ minRows: 2, maxRows: 8 }} value={system} onChange={(e) => setSystem(e.target.value)} />
              </Form.Item>
              <Flex gap={12}>
                <Form.Item label={t('playground.temperature')} htmlFor="pg-temperature" style={{ flex: 1 }}>
                  <InputNumber id="pg-temperature" min={0} max={2} step={0.1} value={temperature} onChange={(v) => setTemperature(v)} style={{ width: '100%' }} placeholder={t('playground.default')} />
                </Form.Item>
                <Form.Item label={t('playground.maxTokens')} htmlFor="pg-max-tokens" style={{ flex: 1 }}>
                  <InputNumber id="pg-max-tokens" min={1} max={10_000_000} precision={0} value={maxTokens} onChange={(v) => setMaxTokens(v)} style={{ width: '100%' }} placeholder={t('playground.default')} />
                </Form.Item>
              </Flex>
            </Form>
          </Card>
        </Col>
        <Col xs={24} lg={16}>
          <Card
            size="small"
            title={<h2 className="tg-card-title">{t('playground.chat')}</h2>}
            extra={
              <Button size="small" onClick={chat.clear} disabled={chat.busy || chat.turns.length === 0}>
                {t('playground.clear')}
              </Button>
            }
          >
            <div aria-live="polite" data-testid="pg-conversation" style={{ minHeight: 160 }}>
              {chat.turns.length === 0 ? <Empty description={t('playground.empty')} /> : null}
              {chat.turns.map((turn, i) => {
                const answer = chat.answers[i];
                return (
                  <div key={i} style={{ marginBottom: 12 }} data-testid={turn.role === 'assistant' ? `pg-answer-${i}` : `pg-question-${i}`}>
                    <Typography.Text strong>{t(`playground.role_${turn.role}`)}</Typography.Text>
                    <Typography.Paragraph style={{ whiteSpace: 'pre-wrap', marginBottom: 4 }} data-testid={turn.role === 'assistant' ? `pg-text-${i}` : undefined}>
                      {turn.content}
                    </Typography.Paragraph>
                    {turn.images?.length ? <Typography.Text type="secondary">{turn.images.map((img) => img.name).join(', ')}</Typography.Text> : null}
                    {answer?.error ? (
                      <Typography.Paragraph type="danger">
                        {answer.error}
                        <ErrorDetails detail={answer.errorDetail} />
                      </Typography.Paragraph>
                    ) : null}
                    {answer ? (
                      <Flex gap={8} align="center" wrap>
                        <AnswerStats answer={answer} index={i} />
                        <Button size="small" icon={<CopyOutlined />} onClick={() => copyCode(answer)} data-testid={`pg-copy-${i}`}>
                          {t('playground.copyAsCode')}
                        </Button>
                      </Flex>
                    ) : null}
                  </div>
                );
              })}
            </div>
            <Input.TextArea
              aria-label={t('playground.message')}
              data-testid="pg-input"
              autoSize={{ minRows: 2, maxRows: 8 }}
              value={input}
              onChange={(e) => setInput(e.target.value)}
              onPressEnter={(e) => {
                if (!e.shiftKey) {
                  e.preventDefault();
                  onSend();
                }
              }}
              placeholder={t('playground.messageHint')}
            />
            <Flex justify="space-between" align="center" style={{ marginTop: 8 }} wrap gap={8}>
              <Upload accept="image/*" showUploadList={false} beforeUpload={addImage} multiple>
                <Button icon={<PictureOutlined />}>{images.length ? t('playground.images', { count: images.length }) : t('playground.attach')}</Button>
              </Upload>
              {chat.busy ? (
                <Button icon={<StopOutlined />} onClick={chat.stop}>
                  {t('playground.stop')}
                </Button>
              ) : (
                <Button type="primary" icon={<SendOutlined />} onClick={onSend} disabled={!key || !activeModel || !input.trim()} data-testid="pg-send">
                  {t('playground.send')}
                </Button>
              )}
            </Flex>
          </Card>
        </Col>
      </Row>
      {stepUp.modal}
    </>
  );
}
