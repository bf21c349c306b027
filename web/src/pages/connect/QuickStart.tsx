import { Alert, Card, Tabs, Typography } from 'antd';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useBaseUrl, useKeyModels } from '../../api/relay';
import { buildSnippets, type Snippet, type SnippetGroup } from './snippets';

const GROUPS: SnippetGroup[] = ['openai', 'anthropic', 'gemini', 'cli', 'apps'];

/** One snippet: its name and the code with a copy button. */
function SnippetBlock({ snippet }: { snippet: Snippet }) {
  const { t } = useTranslation();
  return (
    <div style={{ marginBottom: 12 }}>
      <Typography.Text strong>{t(`connect.snippet_${snippet.label}`)}</Typography.Text>
      <Typography.Paragraph
        copyable={{ text: snippet.code, tooltips: [t('common.copy'), t('common.copied')] }}
        data-testid={`snippet-${snippet.id}`}
        style={{ marginBottom: 0 }}
      >
        <pre className="tg-snippet" tabIndex={0} aria-label={t(`connect.snippet_${snippet.label}`)}>
          <code>{snippet.code}</code>
        </pre>
      </Typography.Paragraph>
    </div>
  );
}

/**
 * The quick-start card: base URL, key and copyable snippets for every client, filled in for one key. Without
 * a key in clear (the key list shows masked keys) the snippets name `$TOLLGATE_API_KEY` and say where the key is.
 */
export function QuickStart({ apiKey, bordered = true }: { apiKey?: string | null; bordered?: boolean }) {
  const { t } = useTranslation();
  const baseUrl = useBaseUrl();
  const known = !!apiKey && apiKey.startsWith('sk-') && !apiKey.includes('*');
  const models = useKeyModels(known ? apiKey : null);
  const snippets = useMemo(
    () => buildSnippets({ baseUrl, apiKey: known ? apiKey! : '$TOLLGATE_API_KEY', models: models.data ?? [] }),
    [baseUrl, apiKey, known, models.data],
  );
  const body = (
    <>
      <dl className="tg-connect-facts">
        <dt>{t('connect.baseUrl')}</dt>
        <dd>
          <Typography.Text className="tg-mono" copyable={{ text: baseUrl, tooltips: [t('common.copy'), t('common.copied')] }} data-testid="connect-base-url">
            {baseUrl}
          </Typography.Text>
        </dd>
        <dt>{t('connect.openaiBase')}</dt>
        <dd>
          <Typography.Text className="tg-mono" copyable={{ text: `${baseUrl}/v1`, tooltips: [t('common.copy'), t('common.copied')] }}>
            {`${baseUrl}/v1`}
          </Typography.Text>
        </dd>
        <dt>{t('connect.key')}</dt>
        <dd>
          {known ? (
            <Typography.Text className="tg-mono" copyable={{ text: apiKey!, tooltips: [t('common.copy'), t('common.copied')] }} data-testid="connect-key">
              {apiKey}
            </Typography.Text>
          ) : (
            <Typography.Text type="secondary">{t('connect.keyHint')}</Typography.Text>
          )}
        </dd>
      </dl>
      {!known ? <Alert type="info" showIcon title={t('connect.placeholderHint')} style={{ marginBottom: 12 }} /> : null}
      <Tabs
        size="small"
        items={GROUPS.map((g) => ({
          key: g,
          label: t(`connect.group_${g}`),
          children: snippets.filter((s) => s.group === g).map((s) => <SnippetBlock key={s.id} snippet={s} />),
        }))}
      />
    </>
  );
  if (!bordered) return <div data-testid="quick-start">{body}</div>;
  return (
    <Card size="small" title={<h2 className="tg-card-title">{t('connect.title')}</h2>} data-testid="quick-start" style={{ marginBottom: 16 }}>
      {body}
    </Card>
  );
}
