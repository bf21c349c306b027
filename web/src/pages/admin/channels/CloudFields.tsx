import { UploadOutlined } from '@ant-design/icons';
import { Button, Col, Form, Input, Row, Select, Upload } from 'antd';
import { useTranslation } from 'react-i18next';
import type { ChannelType } from '../../../api/types';
import { KeyValueEditor } from '../../../components/KeyValueEditor';
import { PRESETS } from './channelForm';

interface CloudFieldsProps {
  type: ChannelType;
  /** Editing: empty credential boxes keep the stored ones. */
  editing: boolean;
}

/** The fields only some channel types have: preset, Azure deployments, Vertex key file, Bedrock key pair. */
export function CloudFields({ type, editing }: CloudFieldsProps) {
  const { t } = useTranslation();
  const form = Form.useFormInstance();
  const required = { required: true, message: t('validation.required') };
  const credential = editing ? [] : [required];

  switch (type) {
    case 'openai-compatible':
      return (
        <Form.Item name={['config', 'preset']} label={t('channels.preset')} extra={t('channels.presetHint')}>
          <Select allowClear data-testid="channel-preset" options={PRESETS.map((p) => ({ value: p, label: t(`channels.preset_${p}`) }))} />
        </Form.Item>
      );
    case 'azure':
      return (
        <>
          <Form.Item name={['config', 'azure', 'api_version']} label={t('channels.azureApiVersion')} extra={t('channels.azureApiVersionHint')} rules={[required]}>
            <Input placeholder={t('channels.azureApiVersionPlaceholder')} data-testid="azure-api-version" />
          </Form.Item>
          <Form.Item label={t('channels.azureDeployments')} extra={t('channels.azureDeploymentsHint')}>
            <KeyValueEditor
              name="azure_deployments"
              keyPlaceholder={t('channels.upstreamModel')}
              valuePlaceholder={t('channels.azureDeployment')}
              addLabel={t('channels.addDeployment')}
            />
          </Form.Item>
        </>
      );
    case 'vertex':
      return (
        <>
          <Form.Item
            name="vertex_sa_json"
            label={t('channels.vertexKeyFile')}
            extra={editing ? t('channels.credentialKeepHint') : t('channels.vertexKeyFileHint')}
            rules={credential}
          >
            <Input.TextArea autoSize={{ minRows: 3, maxRows: 10 }} className="tg-mono" data-testid="vertex-sa-json" />
          </Form.Item>
          <Upload
            accept=".json,application/json"
            showUploadList={false}
            beforeUpload={(file) => {
              void file.text().then((text) => form.setFieldValue('vertex_sa_json', text));
              return false;
            }}
          >
            <Button icon={<UploadOutlined />} style={{ marginBottom: 16 }}>
              {t('channels.vertexUpload')}
            </Button>
          </Upload>
          <Row gutter={16}>
            <Col xs={24} md={12}>
              <Form.Item name={['config', 'vertex', 'project']} label={t('channels.vertexProject')} extra={t('channels.vertexProjectHint')}>
                <Input />
              </Form.Item>
            </Col>
            <Col xs={24} md={12}>
              <Form.Item name={['config', 'vertex', 'region']} label={t('channels.region')} rules={[required]}>
                <Input placeholder={t('channels.vertexRegionPlaceholder')} data-testid="vertex-region" />
              </Form.Item>
            </Col>
          </Row>
        </>
      );
    case 'bedrock':
      return (
        <>
          <Row gutter={16}>
            <Col xs={24} md={12}>
              <Form.Item name="bedrock_access_key" label={t('channels.awsAccessKey')} rules={credential} extra={editing ? t('channels.credentialKeepHint') : undefined}>
                <Input className="tg-mono" autoComplete="off" data-testid="bedrock-access-key" />
              </Form.Item>
            </Col>
            <Col xs={24} md={12}>
              <Form.Item name="bedrock_secret_key" label={t('channels.awsSecretKey')} rules={credential}>
                <Input.Password autoComplete="new-password" data-testid="bedrock-secret-key" />
              </Form.Item>
            </Col>
          </Row>
          <Form.Item name={['config', 'bedrock', 'region']} label={t('channels.region')} rules={[required]}>
            <Input placeholder={t('channels.bedrockRegionPlaceholder')} data-testid="bedrock-region" />
          </Form.Item>
          <Form.Item label={t('channels.bedrockModelIds')} extra={t('channels.bedrockModelIdsHint')}>
            <KeyValueEditor
              name="bedrock_model_ids"
              keyPlaceholder={t('channels.upstreamModel')}
              valuePlaceholder={t('channels.bedrockModelId')}
              addLabel={t('channels.addModelId')}
            />
          </Form.Item>
        </>
      );
    default:
      return null;
  }
}
