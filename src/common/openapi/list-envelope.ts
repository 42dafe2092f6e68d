import { ApiProperty } from '@nestjs/swagger';

/** The wallet service's list envelope (common/http/pagination.ts), for the list response classes. */
export class ListMetadata {
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 10 }) per_page: number;
  @ApiProperty({ example: 1 }) total_count: number;
}

export class ListStatistic {
  @ApiProperty({ example: 'active' }) name: string;
  @ApiProperty({ example: 1 }) count: number;
}
