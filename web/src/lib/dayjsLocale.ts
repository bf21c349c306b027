import dayjs from 'dayjs';
import 'dayjs/locale/zh-cn';
import i18n from '../i18n';

/**
 * Keeps dayjs (relative times, month and week names, the date pickers) in the UI language. Imported by
 * `format.ts`, which every console page reaches through the frame, so the sign-in page does not load dayjs.
 */
function apply(lng: string): void {
  dayjs.locale(lng === 'zh-CN' ? 'zh-cn' : 'en');
}

apply(i18n.language);
i18n.on('languageChanged', apply);
