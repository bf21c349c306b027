import { App, Button, Card, Col, Form, Input, InputNumber, Row, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSimulate } from '../../api/routing';
import { useSession } from '../../auth/SessionProvider';
import { PageHeader } from '../../components/PageHeader';
import { applyServerError } from '../../lib/validation';
import { PrefsFields, toPrefs, type PrefsValues } from './PrefsFields';
import { RankingTable } from './RankingTable';

interface SimValues extends PrefsValues {
  model: string;
  group?: string;
  token_id?: number | null;
  user_id?: number | null;
}

/** The routing simulator: the ranking a request would get now, for the user's own groups and keys (any for admins). */
export default function SimulatorPage() {
  const { t } = useTranslation();
  const { isAdmin } = useSession();
  const { message } = App.useApp();
  const [form] = Form.useForm<SimValues>();
  const sim = useSimulate();

  const onFinish = async (v: SimValues) => {
    try {
      await sim.mutateAsync({
        model: v.model.trim(),
        group: v.group?.trim() || undefined,
        token_id: v.token_id || undefined,
        user_id: v.user_id || undefined,
        preferences: toPrefs(v),
      });
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <>
      <PageHeader title={t('routing.simTitle')} />
      <Typography.Paragraph type="secondary">{t('routing.simIntro')}</Typography.Paragraph>
      <Row gutter={16}>
        <Col xs={24} lg={8}>
          <Card>
            <Form<SimValues> form={form} layout="vertical" onFinish={onFinish} name="simulate">
              <Form.Item name="model" label={t('routing.model')} rules={[{ required: true, whitespace: true, message: t('validation.required') }]}>
                <Input />
              </Form.Item>
              <Form.Item name="group" label={t('routing.group')} extra={t('routing.groupHint')}>
                <Input />
              </Form.Item>
              <Form.Item name="token_id" label={t('routing.tokenId')}>
                <InputNumber min={1} precision={0} style={{ width: '100%' }} />
              </Form.Item>
              {isAdmin ? (
                <Form.Item name="user_id" label={t('routing.userId')} extra={t('routing.userIdHint')}>
                  <InputNumber min={1} precision={0} style={{ width: '100%' }} />
                </Form.Item>
              ) : null}
              <PrefsFields />
              <Button type="primary" htmlType="submit" loading={sim.isPending} data-testid="simulate">
                {t('routing.run')}
              </Button>
            </Form>
          </Card>
        </Col>
        <Col xs={24} lg={16}>
          {sim.data ? (
            <Card
              title={t('routing.result', {
                strategy: t(`routing.strategy_${sim.data.strategy}`, { defaultValue: sim.data.strategy }),
                groups: sim.data.groups.join(' → '),
                us: sim.data.decision_us,
              })}
            >
              <RankingTable candidates={sim.data.candidates} />
            </Card>
          ) : null}
        </Col>
      </Row>
    </>
  );
}
