import { BarChart, LineChart, PieChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import ReactEChartsCore from 'echarts-for-react/esm/core';
import type { EChartsOption } from 'echarts';
import { useThemeMode } from '../theme/ThemeMode';

echarts.use([BarChart, LineChart, PieChart, GridComponent, LegendComponent, TooltipComponent, CanvasRenderer]);

/** An ECharts chart that follows the light/dark mode. */
export function Chart({ option, height = 300 }: { option: EChartsOption; height?: number }) {
  const { mode } = useThemeMode();
  return (
    <ReactEChartsCore
      echarts={echarts}
      option={{ backgroundColor: 'transparent', ...option }}
      theme={mode === 'dark' ? 'dark' : undefined}
      notMerge
      style={{ height, width: '100%' }}
    />
  );
}
